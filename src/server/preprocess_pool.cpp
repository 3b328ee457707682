#include "server/preprocess_pool.h"

#include <algorithm>

#include "core/check.h"

namespace tandem::server {

PreprocessPool::PreprocessPool(int32_t num_threads, int32_t max_queued)
    : max_queued_(static_cast<size_t>(max_queued)) {
  TANDEM_CHECK(num_threads >= 1 && max_queued >= 1)
      << "PreprocessPool(" << num_threads << ", " << max_queued << ")";
  max_open_running_ = static_cast<size_t>(std::max(1, num_threads - 1));
  for (int32_t i = 0; i < num_threads; ++i) {
    threads_.emplace_back([this] { Work(); });
  }
}

PreprocessPool::~PreprocessPool() {
  Stop();
  Join();
}

int32_t PreprocessPool::DefaultThreads() {
  const auto hardware = static_cast<int32_t>(std::thread::hardware_concurrency());
  return std::clamp(hardware / 2, 2, 16);
}

bool PreprocessPool::Submit(std::function<void()> task, bool authorized) {
  {
    std::lock_guard lock(mutex_);
    if (cancelled_.load() || authorized_.size() + open_.size() >= max_queued_) {
      return false;
    }
    (authorized ? authorized_ : open_).push_back(std::move(task));
  }
  // Every waiting thread checks: the one woken may not be allowed an open task.
  ready_.notify_all();
  return true;
}

bool PreprocessPool::TakeTask(std::function<void()>* task, bool* open) {
  if (!authorized_.empty()) {
    *task = std::move(authorized_.front());
    authorized_.pop_front();
    *open = false;
    return true;
  }
  if (!open_.empty() && open_running_ < max_open_running_) {
    *task = std::move(open_.front());
    open_.pop_front();
    ++open_running_;
    *open = true;
    return true;
  }
  return false;
}

void PreprocessPool::Stop() {
  std::deque<std::function<void()>> dropped, dropped_open;
  {
    std::lock_guard lock(mutex_);
    cancelled_.store(true);
    dropped.swap(authorized_);
    dropped_open.swap(open_);
  }
  ready_.notify_all();
  // `dropped` is destroyed here, outside the lock: the tasks' captures (response sinks) go.
}

void PreprocessPool::Join() {
  for (std::thread& thread : threads_) {
    if (thread.joinable()) {
      thread.join();
    }
  }
}

void PreprocessPool::Work() {
  while (true) {
    std::function<void()> task;
    bool open = false;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return cancelled_.load() || TakeTask(&task, &open); });
      if (cancelled_.load()) {
        return;
      }
    }
    task();
    task = nullptr;  // its captures (the request, the sink) go before the slot is given back
    if (open) {
      {
        std::lock_guard lock(mutex_);
        --open_running_;
      }
      ready_.notify_all();  // an open task may wait for this slot
    }
  }
}

}  // namespace tandem::server
