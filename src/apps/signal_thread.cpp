#include "apps/signal_thread.h"

#include <pthread.h>

namespace tandem::apps {

sigset_t ShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}

SignalThread::SignalThread(std::function<void(int)> on_signal) {
  const sigset_t set = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set, on_signal = std::move(on_signal)] {
    int sig = 0;
    sigwait(&set, &sig);
    fired_ = true;
    if (sig != SIGUSR1) on_signal(sig);
  });
}

SignalThread::~SignalThread() {
  if (!fired_) pthread_kill(thread_.native_handle(), SIGUSR1);
  thread_.join();
}

}  // namespace tandem::apps
