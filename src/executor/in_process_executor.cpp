#include "executor/in_process_executor.h"

namespace tandem::executor {

InProcessExecutor::InProcessExecutor(std::unique_ptr<worker::Worker> worker)
    : worker_(std::move(worker)) {}

Result<protocol::StepResult> InProcessExecutor::ExecuteStep(const protocol::StepPlan& plan) {
  return worker_->ExecuteStep(plan);
}

}  // namespace tandem::executor
