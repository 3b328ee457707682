// Executor: the engine core's only view of its workers. InProcessExecutor (TP=1) and the
// multi-process executor live in executor/; tests use a fake.
#pragma once

#include "core/status.h"
#include "protocol/step_plan.h"

namespace tandem::engine {

class Executor {
 public:
  virtual ~Executor() = default;

  // Runs one step on every worker and returns the driver worker's result: one entry per
  // plan.scheduled_request_ids, in plan order (sampled id, or -1 while a prompt is still
  // being prefilled in chunks). Errors: kUnavailable when a worker is gone, kInternal on a
  // failed forward; the engine then fails the scheduled requests with FinishReason kError.
  // Called from the engine core thread only.
  virtual Result<protocol::StepResult> ExecuteStep(const protocol::StepPlan& plan) = 0;
};

}  // namespace tandem::engine
