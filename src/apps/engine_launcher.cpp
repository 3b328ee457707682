#include "apps/engine_launcher.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "core/clock.h"

extern char** environ;

namespace tandem::apps {

EngineLauncher::~EngineLauncher() { Stop(); }

Status EngineLauncher::Launch(const EngineCoreConfig& config,
                              std::function<void(const std::string&)> on_exit) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return Internal("cannot find this binary via /proc/self/exe");
  exe[n] = '\0';
  const std::string json = nlohmann::json(config).dump();
  std::vector<std::string> args = {exe, "_engine-core", "--config-json", json};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child must not inherit the parent's blocked signals (serve blocks SIGINT/SIGTERM
  // for its sigwait thread).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  const int rc = posix_spawn(&pid_, exe, nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Internal("cannot spawn the engine core: " + std::string(strerror(rc)));
  const pid_t pid = pid_;
  watcher_ = std::thread([pid, on_exit = std::move(on_exit)] {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string what;
    if (WIFEXITED(status)) {
      what = "engine core exited with code " + std::to_string(WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
      what = "engine core killed by signal " + std::to_string(WTERMSIG(status));
    } else {
      what = "engine core ended";
    }
    on_exit(what);
  });
  return Status::Ok();
}

void EngineLauncher::Stop(double timeout_s) {
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
