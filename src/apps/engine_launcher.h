// ChildProcess: a child running this same binary with a hidden subcommand (`_engine-core`,
// `_api-server`), watched by a thread that reports how it ended.
#pragma once

#include <signal.h>

#include <sys/types.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "apps/engine_core_config.h"
#include "core/status.h"

namespace tandem::apps {

// In a child started by ChildProcess: ask for `signal` when the parent dies, and exit at once if
// it already has (it may die between the spawn and this call, which PR_SET_PDEATHSIG alone
// misses). The parent's pid comes in TANDEM_PARENT_PID. Call first thing in the child. A TP
// worker asks for SIGKILL: a stopped (SIGSTOP) process keeps a SIGTERM pending forever, and
// was left behind when its engine core and `tandem serve` exited (issue 31, item 9).
void ExitWithParent(int signal = SIGTERM);

class ChildProcess {
 public:
  ~ChildProcess();
  // Spawns `/proc/self/exe args...` with this process's pid in TANDEM_PARENT_PID and no file
  // descriptors beyond 0–2 (an orphan must not hold the HTTP port or the test's pipes); the
  // API key variables (TANDEM_API_KEY, VLLM_API_KEY) only reach `_api-server` children.
  // `on_exit(description)` runs on a watcher thread when the child ends for any reason
  // ("... exited with code N" / "... killed by signal N").
  // Errors: kInternal when the process cannot be spawned.
  Status Spawn(const std::vector<std::string>& args,
               std::function<void(const std::string&)> on_exit);
  // Sends SIGTERM, waits up to timeout_s, then SIGKILL; joins the watcher.
  void Stop(double timeout_s = 5.0);
  // Waits up to `timeout_s` for the child to exit by itself (no signal sent).
  void WaitExit(double timeout_s);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::thread watcher_;
};

// The `_engine-core --config-json ...` arguments for `config`.
std::vector<std::string> EngineCoreArgs(const EngineCoreConfig& config);

// An engine-core child.
class EngineLauncher : public ChildProcess {
 public:
  Status Launch(const EngineCoreConfig& config, std::function<void(const std::string&)> on_exit) {
    return Spawn(EngineCoreArgs(config), std::move(on_exit));
  }
};

}  // namespace tandem::apps
