// InProcessExecutor: the engine core reaches its single worker by a function call (TP = 1).
// A multi-process executor (one worker process per TP rank) comes with tensor parallel.
#pragma once

#include <memory>

#include "engine/executor.h"
#include "worker/worker.h"

namespace tandem::executor {

class InProcessExecutor : public engine::Executor {
 public:
  explicit InProcessExecutor(std::unique_ptr<worker::Worker> worker);
  // Runs the plan on the worker in this thread. Errors: whatever the worker returns.
  Result<protocol::StepResult> ExecuteStep(const protocol::StepPlan& plan) override;

 private:
  std::unique_ptr<worker::Worker> worker_;
};

}  // namespace tandem::executor
