// Scheduler: decides, each step, which requests compute how many tokens, within the token
// budget and the KV blocks available; then applies the workers' sampled tokens.
//
// Central invariant (vLLM V1): there is no prefill phase and no decode phase. Each request has
// num_computed_tokens (KV written) and num_tokens (prompt + generated); each step it catches up
// by min(num_tokens - num_computed_tokens, remaining budget) tokens. A long prompt therefore
// spreads over several steps (chunked prefill) and shares each step with decodes. Running
// requests are served first, in admission order; then waiting ones, in the policy's order
// (RequestQueue), while the budget and max_num_seqs allow. When a running request cannot get
// blocks, a victim is preempted (blocks freed, num_computed_tokens = 0, back into the waiting
// queue) and later recomputed, never dropped: under fcfs the newest running request, under
// priority the one with the largest (priority, arrival) — if it was already scheduled this
// step, its tokens go back to the budget. See docs/design/priority-scheduling.md.
// Speculative decoding: a running request's drafts (proposed by the worker in the last step)
// count as tokens to compute, after its own; the result says how many were accepted, and
// num_computed_tokens rolls back over the rejected ones. Each gained token is checked for a
// stop in order; tokens after a stop are dropped.
// Reference: vLLM v1 core/sched/scheduler.Scheduler (schedule, update_from_output,
// finish_requests, spec_token_ids), FCFS and priority policies, no connectors / async
// scheduling.
// Not thread-safe: owned by the engine core thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "engine/kv_cache_manager.h"
#include "engine/request.h"
#include "engine/request_queue.h"
#include "engine/scheduler_config.h"
#include "protocol/engine_output.h"
#include "protocol/engine_request.h"
#include "protocol/step_plan.h"

namespace tandem::engine {

class Scheduler {
 public:
  // `config` must be valid (SchedulerConfig::Validate; TANDEM_CHECK otherwise).
  explicit Scheduler(const SchedulerConfig& config);

  // Queues a request. Errors (kInvalidArgument, nothing queued): empty or duplicate id, empty
  // prompt, negative token ids, max_tokens < 1, min_tokens outside [0, max_tokens], or
  // prompt + max_tokens > max_model_len.
  Status AddRequest(protocol::EngineRequest request);

  // Finishes each listed request with FinishReason kAbort and frees its blocks. Unknown or
  // already finished ids are ignored. Returns one output per aborted request.
  std::vector<protocol::EngineOutput> AbortRequests(const std::vector<std::string>& request_ids);

  // Builds the next step's plan (see the invariant above). New and resumed requests travel in
  // full, running ones as diffs. finished_request_ids lists requests finished or preempted since
  // the last non-empty plan. An empty plan (nothing scheduled) needs no executor call.
  protocol::StepPlan Schedule();

  // Applies `result` of `plan`: advances num_computed_tokens by the scheduled tokens, publishes
  // newly full blocks in the prefix cache, appends sampled tokens (-1 = none), checks stops and
  // frees finished requests. Returns one output per request that got a token; a step that gave
  // any is counted in EngineStats' iteration-tokens histogram.
  // TANDEM_CHECK: `result` must list the plan's requests in plan order.
  std::vector<protocol::EngineOutput> UpdateFromOutput(const protocol::StepPlan& plan,
                                                       const protocol::StepResult& result);

  // Finishes every request scheduled in `plan` with FinishReason kError and `error` (the
  // executor failed the step). Returns their outputs.
  std::vector<protocol::EngineOutput> FailScheduled(const protocol::StepPlan& plan,
                                                    const std::string& error);

  bool HasUnfinishedRequests() const { return !running_.empty() || !waiting_.empty(); }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  int32_t num_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  int64_t num_preemptions() const { return num_preemptions_; }
  const KvCacheManager& kv_cache_manager() const { return kv_cache_manager_; }
  const SchedulerConfig& config() const { return config_; }
  // The live request `request_id`, or null once finished / unknown.
  const Request* FindRequest(const std::string& request_id) const;

  // Load numbers for EngineStats (dp_rank left 0).
  protocol::EngineStats MakeStats() const;

 private:
  struct ScheduledRequest {
    Request* request;
    int32_t num_new_tokens;               // including the drafts
    std::vector<int32_t> new_block_ids;   // only for running (cached) requests
    std::vector<int32_t> spec_token_ids;  // drafts verified this step (a prefix of the request's)
  };

  // Serves running requests; returns false when it had to preempt (then, as in vLLM, no
  // waiting request is admitted this step).
  bool ScheduleRunning(int32_t* token_budget, std::vector<ScheduledRequest>* scheduled);
  void ScheduleWaiting(int32_t* token_budget, std::vector<ScheduledRequest>* scheduled);
  int32_t CapNewTokens(int32_t num_new_tokens, int32_t budget) const;
  // The running request to preempt when one cannot get blocks (see the policy above).
  Request* PickVictim() const;
  // Takes `request` (running, anywhere in running_) back to the waiting queue.
  void Preempt(Request* request);
  protocol::StepPlan BuildPlan(const std::vector<ScheduledRequest>& new_requests,
                               const std::vector<ScheduledRequest>& cached_requests);
  // Frees `request`, removes it from the queues and forgets it. `request` dangles afterwards.
  void Finish(Request* request, RequestStatus status);
  // A request's weight in EngineStats::num_held_tokens: prompt + max_tokens.
  static int64_t HeldTokens(const Request& r) {
    return int64_t{r.num_prompt_tokens()} + r.sampling().max_tokens;
  }
  protocol::EngineOutput MakeOutput(Request& request, protocol::FinishReason reason);
  Request* FindMutable(const std::string& request_id);
  // How many of `request`'s drafts a step may verify: each must leave room for the token that
  // follows it within max_tokens and max_model_len.
  int32_t NumVerifiableDrafts(const Request& request) const;
  // Applies one request's result: rolls back rejected drafts, appends its tokens with a stop
  // check after each, publishes computed blocks. Returns its output (new_token_ids empty when
  // it gained none) and the finish reason.
  protocol::EngineOutput ApplyTokens(Request* request, int32_t num_scheduled,
                                     const std::vector<int32_t>& drafts,
                                     const std::vector<int32_t>& tokens,
                                     const std::vector<protocol::PositionLogprobs>* logprobs,
                                     protocol::FinishReason* reason);
  void CountSpeculation(int32_t num_drafts, int32_t num_accepted);
  // Counts one step's tokens in the iteration-tokens histogram (EngineStats).
  void ObserveIterationTokens(int64_t num_tokens);
  // Appends a step's prompt logprobs (StepResult::prompt_logprobs[i]) to the request's, before
  // its num_computed_tokens moves past them.
  void GatherPromptLogprobs(Request* request,
                            const std::vector<protocol::PositionLogprobs>& step_logprobs);

  SchedulerConfig config_;
  KvCacheManager kv_cache_manager_;
  std::unordered_map<std::string, std::unique_ptr<Request>> requests_;
  std::vector<Request*> running_;                  // admission order; the back is the newest
  RequestQueue waiting_;                           // in the policy's order
  int64_t next_arrival_seq_ = 0;                   // Request::arrival_seq of the next request added
  std::vector<std::string> finished_request_ids_;  // since the last non-empty plan
  int64_t next_step_id_ = 0;
  int64_t num_preemptions_ = 0;
  int64_t held_tokens_ = 0;  // Σ HeldTokens over requests_
  // Speculative decoding counters (EngineStats::spec_*).
  int64_t spec_num_drafts_ = 0;
  int64_t spec_num_draft_tokens_ = 0;
  int64_t spec_num_accepted_tokens_ = 0;
  std::vector<int64_t> spec_num_accepted_per_pos_;
  // Iteration-tokens histogram (EngineStats::iteration_tokens_*).
  std::vector<int64_t> iteration_tokens_buckets_;
  int64_t iteration_tokens_sum_ = 0;
};

}  // namespace tandem::engine
