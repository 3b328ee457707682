#include "server/preprocess_pool.h"

#include "core/check.h"

namespace tandem::server {

PreprocessPool::PreprocessPool(int32_t num_threads, int32_t max_queued)
    : max_queued_(static_cast<size_t>(max_queued)) {
  TANDEM_CHECK(num_threads >= 1 && max_queued >= 1)
      << "PreprocessPool(" << num_threads << ", " << max_queued << ")";
  for (int32_t i = 0; i < num_threads; ++i) threads_.emplace_back([this] { Work(); });
}

PreprocessPool::~PreprocessPool() {
  Stop();
  Join();
}

bool PreprocessPool::Submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (cancelled_.load() || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
  return true;
}

void PreprocessPool::Stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard lock(mutex_);
    cancelled_.store(true);
    dropped.swap(queue_);
  }
  ready_.notify_all();
  // `dropped` is destroyed here, outside the lock: the tasks' captures (response sinks) go.
}

void PreprocessPool::Join() {
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void PreprocessPool::Work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return cancelled_.load() || !queue_.empty(); });
      if (cancelled_.load()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace tandem::server
