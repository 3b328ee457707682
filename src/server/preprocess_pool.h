// PreprocessPool: a fixed set of threads that run request preprocessing — JSON parsing, chat
// template rendering, tokenization, submission to the engine — off the HTTP I/O threads.
//
// Invariant: an I/O thread never runs work whose cost a request decides. It reads, routes and
// writes; the cheap endpoints (/health, /metrics, /v1/models) answer there, everything else is
// a task here. So however long a render or a tokenization takes, /health, /metrics and the
// streams of running requests keep answering, and at most num_threads requests are being
// preprocessed at a time (the rest wait in a bounded queue).
// Fairness: a task is either authorized (its request carried the API key, or the server asks
// for none) or open (no key on a server that has one: /tokenize, /detokenize). Open tasks run on
// at most num_threads - 1 threads (1 when the pool has one), and an authorized task is taken
// before any open one, so keyless bodies can never occupy every worker (issue 31, item 8).
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

  // Queues `task` to run on a pool thread (`authorized`: see the file comment). Returns false
  // (the task will not run) when max_queued tasks already wait or the pool is stopping.
  // Thread-safe.
  bool Submit(std::function<void()> task, bool authorized = true);

  // The default pool size for this machine: half its hardware threads, at least 2, at most 16
  // (a render or a tokenization is one thread's work; the engine needs the rest).
  static int32_t DefaultThreads();

  // Sets cancelled() (renders check it and end), drops queued tasks and makes the threads exit
  // once their current task returns. Thread-safe, idempotent, never blocks.
  void Stop();
  // Waits for the threads to exit. Call after Stop(), not from a pool thread.
  void Join();

  // True once Stop() was called: long-running tasks poll it to end early.
  const std::atomic<bool>& cancelled() const { return cancelled_; }

 private:
  void Work();

  // The next task a free thread may take, from `authorized_` first (mutex_ held); false if none.
  bool TakeTask(std::function<void()>* task, bool* open);

  const size_t max_queued_;
  size_t max_open_running_ = 1;  // open tasks running at once, at most
  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> authorized_;
  std::deque<std::function<void()>> open_;
  size_t open_running_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace tandem::server
