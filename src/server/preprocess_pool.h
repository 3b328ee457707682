// PreprocessPool: a fixed set of threads that run request preprocessing — JSON parsing, chat
// template rendering, tokenization, submission to the engine — off the HTTP I/O threads.
//
// Invariant: an I/O thread never runs work whose cost a request decides. It reads, routes and
// writes; the cheap endpoints (/health, /metrics, /v1/models) answer there, everything else is
// a task here. So however long a render or a tokenization takes, /health, /metrics and the
// streams of running requests keep answering, and at most num_threads requests are being
// preprocessed at a time (the rest wait in a bounded queue).
// Reference: vLLM's API server offloads tokenization and rendering from its event loop
// (AsyncMicrobatchTokenizer, a thread pool executor); llama.cpp server's --threads-http.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tandem::server {

class PreprocessPool {
 public:
  // Starts `num_threads` (>= 1) threads; at most `max_queued` tasks wait for one.
  PreprocessPool(int32_t num_threads, int32_t max_queued);
  ~PreprocessPool();  // Stop() + Join()

  // Queues `task` to run on a pool thread. Returns false (the task will not run) when
  // max_queued tasks already wait or the pool is stopping. Thread-safe.
  bool Submit(std::function<void()> task);

  // Sets cancelled() (renders check it and end), drops queued tasks and makes the threads exit
  // once their current task returns. Thread-safe, idempotent, never blocks.
  void Stop();
  // Waits for the threads to exit. Call after Stop(), not from a pool thread.
  void Join();

  // True once Stop() was called: long-running tasks poll it to end early.
  const std::atomic<bool>& cancelled() const { return cancelled_; }

 private:
  void Work();

  const size_t max_queued_;
  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
};

}  // namespace tandem::server
