#include "engine/scheduler.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/check.h"
#include "core/clock.h"
#include "engine/stop_checker.h"

namespace tandem::engine {

namespace {

using protocol::EngineOutput;
using protocol::FinishReason;

Status ValidateRequest(const protocol::EngineRequest& request, int32_t max_model_len) {
  const std::string& id = request.request_id;
  const protocol::SamplingParams& sampling = request.sampling;
  if (request.prompt_token_ids.empty()) {
    return InvalidArgument("request '" + id + "': the prompt is empty; expected at least 1 token");
  }
  for (int32_t token_id : request.prompt_token_ids) {
    if (token_id < 0) {
      return InvalidArgument("request '" + id + "': prompt token id " + std::to_string(token_id) +
                             " is negative; expected ids in [0, vocab_size)");
    }
  }
  if (sampling.max_tokens < 1) {
    return InvalidArgument("request '" + id + "': max_tokens is " +
                           std::to_string(sampling.max_tokens) + "; expected at least 1");
  }
  if (sampling.min_tokens < 0 || sampling.min_tokens > sampling.max_tokens) {
    return InvalidArgument("request '" + id + "': min_tokens is " +
                           std::to_string(sampling.min_tokens) + "; expected 0 to max_tokens (" +
                           std::to_string(sampling.max_tokens) + ")");
  }
  const int64_t num_prompt_tokens = static_cast<int64_t>(request.prompt_token_ids.size());
  if (num_prompt_tokens + sampling.max_tokens > max_model_len) {
    return InvalidArgument(
        "This model's maximum context length is " + std::to_string(max_model_len) +
        " tokens. However, you requested " +
        std::to_string(num_prompt_tokens + sampling.max_tokens) + " tokens (" +
        std::to_string(num_prompt_tokens) + " in the prompt, " +
        std::to_string(sampling.max_tokens) +
        " in the completion). Please reduce the length of the prompt or max_tokens.");
  }
  return Status::Ok();
}

}  // namespace

Scheduler::Scheduler(const SchedulerConfig& config)
    : config_(config),
      kv_cache_manager_(config.num_gpu_blocks, config.block_size, config.max_model_len,
                        config.enable_prefix_caching, config.num_state_slots),
      waiting_(config.policy) {
  Status status = config.Validate();
  TANDEM_CHECK(status.ok()) << status.ToString();
  // One counter per draft position from the start: /metrics shows the spec_decode series (at
  // 0) exactly when speculation is on.
  spec_num_accepted_per_pos_.assign(config.num_speculative_tokens, 0);
}

Status Scheduler::AddRequest(protocol::EngineRequest request) {
  if (request.request_id.empty()) return InvalidArgument("request id is empty");
  if (requests_.contains(request.request_id)) {
    return InvalidArgument("request id '" + request.request_id +
                           "' is already in use on this engine; ids must be unique");
  }
  TANDEM_RETURN_IF_ERROR(ValidateRequest(request, config_.max_model_len));
  auto owned = std::make_unique<Request>(std::move(request));
  Request* raw = owned.get();
  raw->queued_time_s = MonotonicSeconds();
  raw->arrival_seq = next_arrival_seq_++;
  requests_.emplace(raw->request_id(), std::move(owned));
  waiting_.Add(raw);
  held_tokens_ += HeldTokens(*raw);
  return Status::Ok();
}

std::vector<EngineOutput> Scheduler::AbortRequests(const std::vector<std::string>& request_ids) {
  std::vector<EngineOutput> outputs;
  for (const std::string& id : request_ids) {
    Request* request = FindMutable(id);
    if (request == nullptr) continue;
    request->status = RequestStatus::kFinishedAborted;
    outputs.push_back(MakeOutput(*request, FinishReason::kAbort));
    Finish(request, RequestStatus::kFinishedAborted);
  }
  return outputs;
}

protocol::StepPlan Scheduler::Schedule() {
  int32_t token_budget = config_.max_num_batched_tokens;
  std::vector<ScheduledRequest> cached_requests;
  std::vector<ScheduledRequest> new_requests;
  // vLLM: no admission in a step that had to preempt; the freed blocks go to running ones.
  if (ScheduleRunning(&token_budget, &cached_requests)) {
    ScheduleWaiting(&token_budget, &new_requests);
  }
  return BuildPlan(new_requests, cached_requests);
}

int32_t Scheduler::CapNewTokens(int32_t num_new_tokens, int32_t budget) const {
  if (config_.long_prefill_token_threshold > 0) {
    num_new_tokens = std::min(num_new_tokens, config_.long_prefill_token_threshold);
  }
  return std::min(num_new_tokens, budget);
}

bool Scheduler::ScheduleRunning(int32_t* token_budget, std::vector<ScheduledRequest>* scheduled) {
  bool preempted_any = false;
  size_t req_index = 0;
  while (req_index < running_.size() && *token_budget > 0) {
    Request* request = running_[req_index];
    const int32_t num_drafts = NumVerifiableDrafts(*request);
    const int32_t num_new_tokens = CapNewTokens(
        request->num_tokens() + num_drafts - request->num_computed_tokens, *token_budget);
    if (num_new_tokens <= 0) {
      ++req_index;
      continue;
    }
    // The budget may cut into the drafts: verify those scheduled (a prefix), or none when it
    // does not even reach the request's own last token.
    const int32_t num_scheduled_drafts =
        std::max(0, request->num_computed_tokens + num_new_tokens - request->num_tokens());
    std::optional<std::vector<int32_t>> new_block_ids;
    bool self_preempted = false;
    while (!(new_block_ids = kv_cache_manager_.AllocateSlots(
                 *request, num_new_tokens + config_.num_lookahead_tokens))) {
      // Out of blocks: preempt the policy's victim and retry.
      Request* victim = PickVictim();
      preempted_any = true;
      if (victim == request) {
        Preempt(victim);
        self_preempted = true;
        break;
      }
      // A priority victim may sit before `request`, already scheduled this step: unschedule
      // it and give its tokens back.
      auto done = std::find_if(scheduled->begin(), scheduled->end(),
                               [&](const ScheduledRequest& s) { return s.request == victim; });
      if (done != scheduled->end()) {
        *token_budget += done->num_new_tokens;
        scheduled->erase(done);
      }
      const auto victim_at = std::find(running_.begin(), running_.end(), victim);
      if (static_cast<size_t>(victim_at - running_.begin()) < req_index) --req_index;
      Preempt(victim);
    }
    if (self_preempted) break;
    scheduled->push_back(
        {request, num_new_tokens, std::move(*new_block_ids),
         std::vector<int32_t>(request->spec_token_ids.begin(),
                              request->spec_token_ids.begin() + num_scheduled_drafts)});
    *token_budget -= num_new_tokens;
    ++req_index;
  }
  return !preempted_any;
}

void Scheduler::ScheduleWaiting(int32_t* token_budget, std::vector<ScheduledRequest>* scheduled) {
  while (!waiting_.empty() && *token_budget > 0 &&
         static_cast<int32_t>(running_.size()) < config_.max_num_seqs) {
    Request* request = waiting_.Front();
    TANDEM_CHECK(request->num_computed_tokens == 0)
        << "waiting request " << request->request_id() << " has computed tokens";
    const ComputedBlocks computed = kv_cache_manager_.GetComputedBlocks(*request);
    const int32_t num_new_tokens =
        CapNewTokens(request->num_tokens() - computed.num_computed_tokens, *token_budget);
    TANDEM_CHECK(num_new_tokens > 0)
        << "request " << request->request_id() << " has nothing to compute";
    if (!kv_cache_manager_.AllocateSlots(*request, num_new_tokens + config_.num_lookahead_tokens,
                                         computed)) {
      break;
    }

    waiting_.PopFront();
    running_.push_back(request);
    if (request->num_cached_tokens < 0) {  // first admission, not a resumption
      request->num_cached_tokens = computed.num_computed_tokens;
      request->scheduled_time_s = MonotonicSeconds();
      kv_cache_manager_.RecordPrefixCacheQuery(request->num_tokens(), computed.num_computed_tokens);
    }
    request->num_computed_tokens = computed.num_computed_tokens;
    request->status = RequestStatus::kRunning;
    scheduled->push_back({request, num_new_tokens, {}});
    *token_budget -= num_new_tokens;
  }
}

Request* Scheduler::PickVictim() const {
  TANDEM_CHECK(!running_.empty()) << "no running request to preempt";
  if (config_.policy == SchedulingPolicy::kFcfs) return running_.back();
  // The one served last: the largest (priority, arrival, arrival_seq).
  return *std::max_element(running_.begin(), running_.end(),
                           [](const Request* a, const Request* b) { return ServedBefore(*a, *b); });
}

void Scheduler::Preempt(Request* request) {
  const auto at = std::find(running_.begin(), running_.end(), request);
  TANDEM_CHECK(at != running_.end())
      << "request " << request->request_id() << " is not running; it cannot be preempted";
  running_.erase(at);
  kv_cache_manager_.Free(*request);
  request->status = RequestStatus::kPreempted;
  request->num_computed_tokens = 0;
  request->spec_token_ids.clear();
  waiting_.Prepend(request);
  finished_request_ids_.push_back(request->request_id());  // workers drop its state
  ++num_preemptions_;
}

protocol::StepPlan Scheduler::BuildPlan(const std::vector<ScheduledRequest>& new_requests,
                                        const std::vector<ScheduledRequest>& cached_requests) {
  protocol::StepPlan plan;
  plan.step_id = next_step_id_++;
  for (const ScheduledRequest& s : new_requests) {
    const Request& request = *s.request;
    protocol::NewRequestData data;
    data.request_id = request.request_id();
    data.token_ids = request.all_token_ids();
    data.num_prompt_tokens = request.num_prompt_tokens();
    data.sampling = request.sampling();
    data.block_ids = kv_cache_manager_.GetBlockIds(request.request_id());
    data.num_computed_tokens = request.num_computed_tokens;
    data.state_slot = kv_cache_manager_.GetStateSlot(request.request_id());
    plan.new_requests.push_back(std::move(data));
    plan.scheduled_request_ids.push_back(request.request_id());
    plan.num_scheduled_tokens.push_back(s.num_new_tokens);
  }
  for (const ScheduledRequest& s : cached_requests) {
    plan.cached_requests.push_back(
        {s.request->request_id(), s.new_block_ids, s.request->num_computed_tokens});
    plan.scheduled_request_ids.push_back(s.request->request_id());
    plan.num_scheduled_tokens.push_back(s.num_new_tokens);
  }
  if (config_.num_speculative_tokens > 0) {  // parallel to scheduled_request_ids
    plan.scheduled_spec_decode_tokens.resize(new_requests.size());
    for (const ScheduledRequest& s : cached_requests) {
      plan.scheduled_spec_decode_tokens.push_back(s.spec_token_ids);
    }
  }
  // An empty plan never reaches the workers: keep the finished ids for the next one.
  if (!plan.scheduled_request_ids.empty()) plan.finished_request_ids.swap(finished_request_ids_);
  return plan;
}

std::vector<EngineOutput> Scheduler::UpdateFromOutput(const protocol::StepPlan& plan,
                                                      const protocol::StepResult& result) {
  const size_t num_scheduled = plan.scheduled_request_ids.size();
  TANDEM_CHECK(result.request_ids.size() == num_scheduled &&
               result.sampled_token_ids.size() == num_scheduled)
      << "step " << plan.step_id << ": result lists " << result.request_ids.size()
      << " requests and " << result.sampled_token_ids.size() << " token lists; expected "
      << num_scheduled;
  std::vector<EngineOutput> outputs;
  int64_t num_iteration_tokens = 0;  // vLLM's: tokens given + prompts of first tokens
  for (size_t i = 0; i < num_scheduled; ++i) {
    const std::string& id = plan.scheduled_request_ids[i];
    TANDEM_CHECK(result.request_ids[i] == id)
        << "step " << plan.step_id << ": result entry " << i << " is '" << result.request_ids[i]
        << "'; expected '" << id << "'";
    Request* request = FindMutable(id);
    if (request == nullptr || request->status != RequestStatus::kRunning) continue;
    FinishReason reason = FinishReason::kNone;
    const auto* logprobs = i < result.logprobs.size() ? &result.logprobs[i] : nullptr;
    const bool first_tokens = request->num_output_tokens() == 0;
    if (i < result.prompt_logprobs.size()) {
      GatherPromptLogprobs(request, result.prompt_logprobs[i]);
    }
    EngineOutput output = ApplyTokens(request, plan.num_scheduled_tokens[i], plan.SpecTokens(i),
                                      result.sampled_token_ids[i], logprobs, &reason);
    if (output.new_token_ids.empty()) continue;
    if (first_tokens) output.prompt_logprobs = std::move(request->prompt_logprobs);
    num_iteration_tokens += static_cast<int64_t>(output.new_token_ids.size()) +
                            (first_tokens ? request->num_prompt_tokens() : 0);
    if (reason != FinishReason::kNone) {
      Finish(request, request->status);
    } else if (i < result.draft_token_ids.size()) {
      request->spec_token_ids = result.draft_token_ids[i];
    }
    outputs.push_back(std::move(output));
  }
  if (!outputs.empty()) ObserveIterationTokens(num_iteration_tokens);
  return outputs;
}

void Scheduler::GatherPromptLogprobs(Request* request,
                                     const std::vector<protocol::PositionLogprobs>& step_logprobs) {
  // Entry r scores prompt token num_computed_tokens + r + 1. A request recomputed after
  // preemption scores positions again: only the next ones not yet held are kept.
  for (size_t r = 0; r < step_logprobs.size(); ++r) {
    const size_t position = static_cast<size_t>(request->num_computed_tokens) + r;
    if (position == request->prompt_logprobs.size()) {
      request->prompt_logprobs.push_back(step_logprobs[r]);
    }
  }
}

void Scheduler::ObserveIterationTokens(int64_t num_tokens) {
  if (iteration_tokens_buckets_.empty()) {
    iteration_tokens_buckets_.assign(protocol::kNumIterationTokensBuckets + 1, 0);
  }
  const auto* bounds = std::begin(protocol::kIterationTokensBuckets);
  const auto* bound = std::lower_bound(bounds, std::end(protocol::kIterationTokensBuckets),
                                       num_tokens);  // first bound >= num_tokens: its bucket
  ++iteration_tokens_buckets_[static_cast<size_t>(bound - bounds)];
  iteration_tokens_sum_ += num_tokens;
}

EngineOutput Scheduler::ApplyTokens(Request* request, int32_t num_scheduled,
                                    const std::vector<int32_t>& drafts,
                                    const std::vector<int32_t>& tokens,
                                    const std::vector<protocol::PositionLogprobs>* logprobs,
                                    FinishReason* reason) {
  const int32_t num_tokens_before = request->num_tokens();
  request->num_computed_tokens += num_scheduled;
  EngineOutput output;
  // A partial prefill gains nothing (vLLM discards a token sampled there).
  if (tokens.empty() || request->num_computed_tokens < num_tokens_before) {
    kv_cache_manager_.CacheComputedBlocks(*request);
    return output;
  }
  const int32_t num_drafts = static_cast<int32_t>(drafts.size());
  const int32_t num_accepted = static_cast<int32_t>(tokens.size()) - 1;
  TANDEM_CHECK(num_accepted >= 0 && num_accepted <= num_drafts)
      << "request " << request->request_id() << " gained " << tokens.size() << " tokens from "
      << num_drafts << " drafts; expected 1 to " << num_drafts + 1;
  // Rejected drafts' KV is not valid: roll back over them (their slots are overwritten later).
  request->num_computed_tokens -= num_drafts - num_accepted;
  if (num_drafts > 0) CountSpeculation(num_drafts, num_accepted);
  for (size_t k = 0; k < tokens.size() && *reason == FinishReason::kNone; ++k) {
    request->AppendOutputToken(tokens[k]);
    *reason = CheckStop(*request, config_.max_model_len);
    output.new_token_ids.push_back(tokens[k]);
    if (request->sampling().logprobs >= 0 && logprobs != nullptr && k < logprobs->size()) {
      output.new_logprobs.push_back((*logprobs)[k]);
    }
  }
  // Tokens after a stop were computed but are dropped: so is their KV.
  request->num_computed_tokens = std::min(request->num_computed_tokens, request->num_tokens() - 1);
  kv_cache_manager_.CacheComputedBlocks(*request);
  EngineOutput head = MakeOutput(*request, *reason);
  head.new_token_ids = std::move(output.new_token_ids);
  head.new_logprobs = std::move(output.new_logprobs);
  return head;
}

int32_t Scheduler::NumVerifiableDrafts(const Request& request) const {
  if (config_.num_speculative_tokens <= 0 || request.spec_token_ids.empty()) return 0;
  // k drafts may yield k + 1 tokens: that many must fit in max_tokens and max_model_len.
  const int32_t by_max_tokens = request.sampling().max_tokens - request.num_output_tokens() - 1;
  const int32_t by_model_len = config_.max_model_len - request.num_tokens() - 1;
  return std::clamp(std::min({static_cast<int32_t>(request.spec_token_ids.size()),
                              config_.num_speculative_tokens, by_max_tokens, by_model_len}),
                    0, config_.num_speculative_tokens);
}

void Scheduler::CountSpeculation(int32_t num_drafts, int32_t num_accepted) {
  ++spec_num_drafts_;
  spec_num_draft_tokens_ += num_drafts;
  spec_num_accepted_tokens_ += num_accepted;
  if (static_cast<int32_t>(spec_num_accepted_per_pos_.size()) < config_.num_speculative_tokens) {
    spec_num_accepted_per_pos_.resize(config_.num_speculative_tokens, 0);
  }
  for (int32_t pos = 0; pos < num_accepted; ++pos) ++spec_num_accepted_per_pos_[pos];
}

std::vector<EngineOutput> Scheduler::FailScheduled(const protocol::StepPlan& plan,
                                                   const std::string& error) {
  std::vector<EngineOutput> outputs;
  for (const std::string& id : plan.scheduled_request_ids) {
    Request* request = FindMutable(id);
    if (request == nullptr) continue;
    request->status = RequestStatus::kFinishedError;
    EngineOutput output = MakeOutput(*request, FinishReason::kError);
    output.error = error;
    outputs.push_back(std::move(output));
    Finish(request, RequestStatus::kFinishedError);
  }
  return outputs;
}

void Scheduler::Finish(Request* request, RequestStatus status) {
  request->status = status;
  held_tokens_ -= HeldTokens(*request);
  kv_cache_manager_.Free(*request);
  running_.erase(std::remove(running_.begin(), running_.end(), request), running_.end());
  waiting_.Remove(request);
  std::string request_id = request->request_id();  // erase destroys *request
  finished_request_ids_.push_back(request_id);
  requests_.erase(request_id);
}

EngineOutput Scheduler::MakeOutput(Request& request, FinishReason reason) {
  EngineOutput output;
  output.request_id = request.request_id();
  output.finish_reason = static_cast<uint8_t>(reason);
  output.stop_token_id = reason == FinishReason::kStop ? request.stop_token_id : -1;
  output.timestamp_s = MonotonicSeconds();
  if (!request.first_output_sent) {
    output.num_cached_tokens = std::max(request.num_cached_tokens, 0);
    output.queued_time_s = request.queued_time_s;
    output.scheduled_time_s = request.scheduled_time_s;
    request.first_output_sent = true;
  }
  return output;
}

const Request* Scheduler::FindRequest(const std::string& request_id) const {
  auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : it->second.get();
}

Request* Scheduler::FindMutable(const std::string& request_id) {
  auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : it->second.get();
}

protocol::EngineStats Scheduler::MakeStats() const {
  protocol::EngineStats stats;
  stats.num_running = num_running();
  stats.num_waiting = num_waiting();
  stats.kv_cache_usage = kv_cache_manager_.Usage();
  stats.num_gpu_blocks = config_.num_gpu_blocks;
  stats.block_size = config_.block_size;
  stats.num_state_slots = config_.num_state_slots;
  stats.num_state_slots_used = kv_cache_manager_.num_state_slots_used();
  stats.num_preemptions = num_preemptions_;
  stats.prefix_cache_queries = kv_cache_manager_.prefix_cache_stats().num_query_tokens;
  stats.prefix_cache_hits = kv_cache_manager_.prefix_cache_stats().num_hit_tokens;
  stats.num_held_tokens = held_tokens_;
  stats.spec_num_drafts = spec_num_drafts_;
  stats.spec_num_draft_tokens = spec_num_draft_tokens_;
  stats.spec_num_accepted_tokens = spec_num_accepted_tokens_;
  stats.spec_num_accepted_per_pos = spec_num_accepted_per_pos_;
  stats.iteration_tokens_buckets = iteration_tokens_buckets_;
  stats.iteration_tokens_sum = iteration_tokens_sum_;
  return stats;
}

}  // namespace tandem::engine
