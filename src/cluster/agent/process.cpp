#include "cluster/agent/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

namespace tandem::cluster::agent {

std::string DescribeExit(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exited with code {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return fmt::format("was killed by signal {} ({})", sig, strsignal(sig));
  }
  return fmt::format("ended with wait status {}", wait_status);
}

std::string TailOfFile(const std::string& path, int lines) {
  if (lines <= 0) return "";
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > 65536 ? size - 65536 : 0;
  in.seekg(start);
  std::string text(static_cast<size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  // The start of the last `lines` lines: just after the lines-th newline from the end.
  size_t first = 0;
  size_t pos = text.size();
  for (int n = 0; n < lines; ++n) {
    if (pos == 0) break;
    const size_t newline = text.rfind('\n', pos - 1);
    if (newline == std::string::npos) break;
    if (n == lines - 1) first = newline + 1;
    pos = newline;
  }
  return text.substr(first);
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const LaunchSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("an empty command line");
  const int log = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    return Unavailable(fmt::format("cannot open the log '{}': {}", spec.log_path, strerror(errno)));
  }
  // Everything the child needs, prepared before fork (no allocation after it).
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int c : spec.cpus) CPU_SET(c, &cpus);
  const std::string exec_error = fmt::format("tandem agent: cannot execute '{}': ", spec.argv[0]);

  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    return Unavailable(fmt::format("fork failed: {}", strerror(errno)));
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: Stop() reaches every process it starts
    // It ends with the agent's supervising thread (which lives as long as the agent): an
    // instance nobody supervises would hold its devices and port for ever.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the agent blocks its shutdown signals
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    if (!spec.cpus.empty()) sched_setaffinity(0, sizeof(cpus), &cpus);
    close_range(3, ~0U, 0);  // the agent's sockets and files are not the instance's
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    (void)!write(STDERR_FILENO, exec_error.data(), exec_error.size());
    const char* why = strerror(err);
    (void)!write(STDERR_FILENO, why, strlen(why));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
  }
  // Also here: a Stop() right after Spawn() must find the group even before the child ran.
  setpgid(pid, pid);
  close(log);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid));
}

ChildProcess::~ChildProcess() {
  if (!exit_) Stop(5);
}

std::optional<std::string> ChildProcess::Poll() {
  if (exit_) return exit_;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_ = DescribeExit(status);
    kill(-pid_, SIGKILL);  // anything it left behind in its group
  } else if (r < 0 && errno == ECHILD) {
    exit_ = "ended (reaped elsewhere)";
  }
  return exit_;
}

void ChildProcess::Stop(double grace_s) {
  if (Poll()) return;
  kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (Poll()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid_, SIGKILL);
  int status = 0;
  if (waitpid(pid_, &status, 0) == pid_) exit_ = DescribeExit(status);
  if (!exit_) exit_ = "killed";
}

}  // namespace tandem::cluster::agent
