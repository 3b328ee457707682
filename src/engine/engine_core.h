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

  // Lock-step mode (expert-parallel MoE with DP > 1, vLLM's DP waves): every Step() runs
  // exactly one forward on the workers — a dummy one (no tokens, Model::DummyForward) when
  // nothing is scheduled — so all DP ranks enter the same EP collectives in the same order.
  void set_lockstep(bool lockstep) { lockstep_ = lockstep; }
  bool lockstep() const { return lockstep_; }
  // The pending abort outputs and the stats, without stepping (a lock-step rank outside a
  // wave must not run a forward on its own).
  protocol::EngineOutputs TakePendingOutputs();
  // True while a request is unfinished (what a DP wave asks every rank).
  bool HasUnfinishedRequests() const { return scheduler_.HasUnfinishedRequests(); }

  protocol::EngineStats Stats() const;
  // A request arrived from API server `client_index` (≥ 0), before AddRequest accepts or
  // refuses it: counted in EngineStats::num_received_by_client.
  void NoteReceived(int32_t client_index);
  // This rank entered a DP wave (for the stats).
  void NoteWaveStarted() { ++num_waves_; }
  const Scheduler& scheduler() const { return scheduler_; }

 private:
  std::vector<protocol::EngineOutput> ExecuteAndUpdate(const protocol::StepPlan& plan);
  // Logs the acceptance of speculative decoding since the last such line, every 10 s at most.
  void LogSpeculation(const protocol::EngineStats& stats);
  void Count(const protocol::EngineOutputs& outputs);  // per-rank metrics counters

  Scheduler scheduler_;
  std::unique_ptr<Executor> executor_;
  int32_t dp_rank_;
  std::vector<protocol::EngineOutput> pending_outputs_;  // aborts since the last Step
  int64_t num_requests_finished_ = 0;                    // cumulative, for per-rank metrics
  int64_t num_generation_tokens_ = 0;
  bool lockstep_ = false;
  int64_t num_waves_ = 0;
  int64_t num_dummy_steps_ = 0;
  int64_t stats_seq_ = 0;              // EngineStats::seq: batches of outputs built so far
  protocol::EngineStats spec_logged_;  // the stats of the last SpecDecoding log line
  double spec_log_due_s_ = 0;          // MonotonicSeconds() of the next one at the earliest
  std::vector<int64_t> num_received_by_client_;
};

}  // namespace tandem::engine
