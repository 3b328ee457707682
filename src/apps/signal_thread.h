// SignalThread: shutdown signals (SIGINT, SIGTERM) handled on a thread of their own, for the
// long-running subcommands (serve, manager, agent).
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace tandem::apps {

// SIGINT/SIGTERM, and SIGUSR1 (used to wake the SignalThread at exit).
sigset_t ShutdownSignals();

// Blocks the shutdown signals and waits for them on its own thread, which calls `on_signal`
// for SIGINT or SIGTERM. They must have been blocked before the process started any other
// thread (the subcommands do so first thing): a thread that does not block them would take
// the signal's default action and kill the process without a clean shutdown.
class SignalThread {
 public:
  explicit SignalThread(std::function<void(int)> on_signal);
  ~SignalThread();

 private:
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace tandem::apps
