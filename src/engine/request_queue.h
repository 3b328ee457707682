// RequestQueue: the scheduler's waiting queue, ordered by the scheduling policy.
//   fcfs:     arrival order; a preempted request re-enters at the front (it arrived first).
//   priority: ascending (priority, arrival time, arrival_seq): lower priority values first,
//             then earlier arrivals; a preempted request is re-inserted by that same key.
// Reference: vLLM v1 core/sched/request_queue.py (FCFSRequestQueue, PriorityRequestQueue).
// Design: docs/design/priority-scheduling.md. Not thread-safe (the engine core thread's).
#pragma once

#include <cstddef>
#include <deque>

#include "engine/request.h"
#include "engine/scheduler_config.h"

namespace tandem::engine {

// True when `a` is served before `b` under the priority policy: (priority, arrival time,
// arrival_seq) ascending.
bool ServedBefore(const Request& a, const Request& b);

class RequestQueue {
 public:
  explicit RequestQueue(SchedulingPolicy policy) : policy_(policy) {}

  // A new request: at the back (fcfs) or by its key (priority).
  void Add(Request* request);
  // A preempted request: at the front (fcfs) or by its key (priority).
  void Prepend(Request* request);
  // The next request to admit. Precondition: !empty().
  Request* Front() const { return queue_.front(); }
  void PopFront() { queue_.pop_front(); }
  // Removes `request` if queued (finished or aborted while waiting).
  void Remove(const Request* request);

  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }
  SchedulingPolicy policy() const { return policy_; }

 private:
  void InsertByKey(Request* request);

  SchedulingPolicy policy_;
  std::deque<Request*> queue_;  // in serving order
};

}  // namespace tandem::engine
