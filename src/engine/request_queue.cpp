#include "engine/request_queue.h"

#include <algorithm>

namespace tandem::engine {

bool ServedBefore(const Request& a, const Request& b) {
  if (a.priority() != b.priority()) return a.priority() < b.priority();
  if (a.arrival_time_s() != b.arrival_time_s()) return a.arrival_time_s() < b.arrival_time_s();
  return a.arrival_seq < b.arrival_seq;
}

void RequestQueue::Add(Request* request) {
  if (policy_ == SchedulingPolicy::kFcfs) {
    queue_.push_back(request);
  } else {
    InsertByKey(request);
  }
}

void RequestQueue::Prepend(Request* request) {
  if (policy_ == SchedulingPolicy::kFcfs) {
    queue_.push_front(request);
  } else {
    InsertByKey(request);
  }
}

void RequestQueue::Remove(const Request* request) {
  queue_.erase(std::remove(queue_.begin(), queue_.end(), request), queue_.end());
}

void RequestQueue::InsertByKey(Request* request) {
  // After every request served before it: the first one it is served before.
  auto at = std::upper_bound(
      queue_.begin(), queue_.end(), request,
      [](const Request* r, const Request* queued) { return ServedBefore(*r, *queued); });
  queue_.insert(at, request);
}

}  // namespace tandem::engine
