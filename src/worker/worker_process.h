// The loop of a TP worker process (TP rank ≥ 1): every step plan the engine core sends is
// executed on this rank's shard in lock-step with rank 0 (the model's collectives pair the
// ranks up), and acknowledged, so a failing rank is reported instead of hanging the step.
// Reference: vLLM v1 executor/multiproc_executor.py WorkerProc.worker_busy_loop.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "worker/worker.h"

namespace tandem::worker {

struct WorkerLoopOptions {
  int32_t tp_rank = 1;
  std::string plan_endpoint;  // PULL, connect: WorkerInit then StepPlans from the engine
  std::string ack_endpoint;   // PUSH, connect: WorkerAcks to the engine
};

// Waits for WorkerInit, builds the Worker with `make_worker(num_kv_blocks)`, acks, then
// executes plans until the engine's socket goes quiet for good (the parent died) or a
// kShutdown frame arrives. Returns the process exit code.
int RunWorkerLoop(const WorkerLoopOptions& options,
                  const std::function<Result<std::unique_ptr<Worker>>(int32_t)>& make_worker);

}  // namespace tandem::worker
