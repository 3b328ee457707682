#include "apps/engine_launcher.h"

#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/clock.h"

extern char** environ;

namespace tandem::apps {

std::vector<std::string> EngineCoreArgs(const EngineCoreConfig& config) {
  return {"_engine-core", "--config-json", nlohmann::json(config).dump()};
}

void ExitWithParent(int signal) {
  prctl(PR_SET_PDEATHSIG, signal);
  const char* parent = std::getenv("TANDEM_PARENT_PID");
  if (parent != nullptr && std::atoi(parent) != getppid()) _exit(1);  // orphaned already
}

ChildProcess::~ChildProcess() { Stop(); }

Status ChildProcess::Spawn(const std::vector<std::string>& args,
                           std::function<void(const std::string&)> on_exit) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return Internal("cannot find this binary via /proc/self/exe");
  exe[n] = '\0';
  std::vector<std::string> full = {exe};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child must not inherit the parent's blocked signals (serve blocks SIGINT/SIGTERM
  // for its sigwait thread).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addclosefrom_np(&files, 3);
  // Secrets go only where they are used: an API server checks the key; engine cores and TP
  // workers never see it (their environment is readable in /proc by the same user, and in
  // crash reports).
  const bool api_server = args[0] == "_api-server";
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.rfind("TANDEM_PARENT_PID=", 0) == 0) continue;
    if (!api_server &&
        (entry.rfind("TANDEM_API_KEY=", 0) == 0 || entry.rfind("VLLM_API_KEY=", 0) == 0)) {
      continue;
    }
    env_strings.emplace_back(entry);
  }
  env_strings.push_back("TANDEM_PARENT_PID=" + std::to_string(getpid()));
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  const int rc = posix_spawn(&pid_, exe, &files, &attr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Internal("cannot spawn '" + args[0] + "': " + std::string(strerror(rc)));
  const pid_t pid = pid_;
  const std::string name = args[0] == "_engine-core" ? "engine core" : args[0].substr(1);
  watcher_ = std::thread([pid, name, on_exit = std::move(on_exit)] {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string what;
    if (WIFEXITED(status)) {
      what = name + " exited with code " + std::to_string(WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
      what = name + " killed by signal " + std::to_string(WTERMSIG(status));
    } else {
      what = name + " ended";
    }
    on_exit(what);
  });
  return Status::Ok();
}

void ChildProcess::WaitExit(double timeout_s) {
  const double deadline = MonotonicSeconds() + timeout_s;
  while (pid_ > 0 && kill(pid_, 0) == 0 && MonotonicSeconds() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ChildProcess::Stop(double timeout_s) {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    const double deadline = MonotonicSeconds() + timeout_s;
    while (kill(pid_, 0) == 0 && MonotonicSeconds() < deadline) {
      // The watcher reaps the child; kill(pid, 0) fails once it has.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (kill(pid_, 0) == 0) kill(pid_, SIGKILL);
    pid_ = -1;
  }
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace tandem::apps
