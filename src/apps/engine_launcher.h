// EngineLauncher: starts an engine-core child process (this same binary, hidden
// `_engine-core` subcommand) and watches it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <thread>

#include "apps/engine_core_config.h"
#include "core/status.h"

namespace tandem::apps {

class EngineLauncher {
 public:
  ~EngineLauncher();
  // Spawns the child with `config`. `on_exit(exit description)` runs on a watcher thread when
  // the child ends for any reason. Errors: kInternal when the process cannot be spawned.
  Status Launch(const EngineCoreConfig& config, std::function<void(const std::string&)> on_exit);
  // Sends SIGTERM, waits up to timeout_s, then SIGKILL.
  void Stop(double timeout_s = 5.0);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::thread watcher_;
};

}  // namespace tandem::apps
