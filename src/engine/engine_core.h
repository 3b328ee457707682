// EngineCore: one DP rank's engine — the Scheduler plus the Executor that reaches its workers.
// Each step is schedule → execute → update; the ZeroMQ loop around it is engine_process.h.
// Reference: vLLM v1 engine/core.EngineCore (step, add_request, abort_requests).
// Not thread-safe: one thread (the engine loop) calls every method.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/executor.h"
#include "engine/scheduler.h"
#include "engine/scheduler_config.h"
#include "protocol/engine_output.h"
#include "protocol/engine_request.h"

namespace tandem::engine {

class EngineCore {
 public:
  // `config` must be valid (SchedulerConfig::Validate; TANDEM_CHECK otherwise). `executor`
  // must not be null. `dp_rank` is reported in every EngineStats.
  EngineCore(SchedulerConfig config, std::unique_ptr<Executor> executor, int32_t dp_rank);

  // Queues a request. Errors: kInvalidArgument as Scheduler::AddRequest (nothing queued).
  Status AddRequest(protocol::EngineRequest request);

  // Aborts the listed requests (unknown ids ignored); their kAbort outputs come with the next
  // Step().
  void AbortRequests(const std::vector<std::string>& request_ids);

  // True while a request is unfinished or an output waits to be returned by Step().
  bool HasWork() const;

  // Runs one step: schedule, execute on the workers, apply the result. Returns the outputs of
  // this step (pending abort outputs first) and the stats after it. An executor failure fails
  // the step's requests with FinishReason kError; the engine keeps serving the others.
  protocol::EngineOutputs Step();

  protocol::EngineStats Stats() const;
  const Scheduler& scheduler() const { return scheduler_; }

 private:
  std::vector<protocol::EngineOutput> ExecuteAndUpdate(const protocol::StepPlan& plan);

  Scheduler scheduler_;
  std::unique_ptr<Executor> executor_;
  int32_t dp_rank_;
  std::vector<protocol::EngineOutput> pending_outputs_;  // aborts since the last Step
  int64_t num_requests_finished_ = 0;  // cumulative, for per-rank metrics
  int64_t num_generation_tokens_ = 0;
};

}  // namespace tandem::engine
