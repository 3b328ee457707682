// ChildProcess: one model-instance process started by the agent: fork + exec (no shell) in a
// process group of its own, stdout and stderr to a log file of its own, an optional CPU affinity,
// polled for its exit and stopped group-wide (SIGTERM, then SIGKILL after a grace period).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::cluster::agent {

struct LaunchSpec {
  std::vector<std::string> argv;  // argv[0] is a path or a name looked up in PATH
  std::vector<std::string> env;   // NAME=VALUE, the whole environment
  std::string log_path;           // created, or emptied (one file per run)
  std::vector<int> cpus;          // CPU affinity; empty = inherit
};

class ChildProcess {
 public:
  // Starts the process. Errors: kInvalidArgument (empty argv), kUnavailable (fork or the log
  // file failed). A program that cannot be executed exits with code 127 and says why in its log.
  static Result<std::unique_ptr<ChildProcess>> Spawn(const LaunchSpec& spec);
  ~ChildProcess();  // stops the process group if it still runs

  pid_t pid() const { return pid_; }

  // The exit description once the process has ended ("exited with code 1", "was killed by
  // signal 9 (Killed)"), nullopt while it runs. Reaps it.
  std::optional<std::string> Poll();

  // SIGTERM to the group, SIGKILL after `grace_s`; returns when the process has been reaped.
  void Stop(double grace_s);

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  std::optional<std::string> exit_;
};

// A waitpid() status in words.
std::string DescribeExit(int wait_status);

// The last `lines` lines of the file at `path` (at most 64 KiB read), "" when unreadable.
std::string TailOfFile(const std::string& path, int lines);

}  // namespace tandem::cluster::agent
