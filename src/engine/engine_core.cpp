#include "engine/engine_core.h"

#include <utility>

#include <fmt/format.h>

#include "core/check.h"
#include "core/clock.h"
#include "core/logging.h"

namespace tandem::engine {

EngineCore::EngineCore(SchedulerConfig config, std::unique_ptr<Executor> executor, int32_t dp_rank)
    : scheduler_(config), executor_(std::move(executor)), dp_rank_(dp_rank) {
  TANDEM_CHECK(executor_ != nullptr) << "EngineCore of DP rank " << dp_rank << " has no executor";
}

Status EngineCore::AddRequest(protocol::EngineRequest request) {
  return scheduler_.AddRequest(std::move(request));
}

void EngineCore::AbortRequests(const std::vector<std::string>& request_ids) {
  std::vector<protocol::EngineOutput> outputs = scheduler_.AbortRequests(request_ids);
  for (protocol::EngineOutput& output : outputs) pending_outputs_.push_back(std::move(output));
}

bool EngineCore::HasWork() const {
  return scheduler_.HasUnfinishedRequests() || !pending_outputs_.empty();
}

protocol::EngineOutputs EngineCore::Step() {
  ++stats_seq_;
  protocol::EngineOutputs outputs;
  outputs.outputs.swap(pending_outputs_);
  if (scheduler_.HasUnfinishedRequests() || lockstep_) {
    const protocol::StepPlan plan = scheduler_.Schedule();
    for (protocol::EngineOutput& output : ExecuteAndUpdate(plan)) {
      outputs.outputs.push_back(std::move(output));
    }
  }
  Count(outputs);
  outputs.stats = Stats();
  LogSpeculation(outputs.stats);
  return outputs;
}

void EngineCore::LogSpeculation(const protocol::EngineStats& stats) {
  // vLLM's SpecDecoding metrics line, at most every 10 s, over the interval since the last.
  const double now_s = MonotonicSeconds();
  if (stats.spec_num_drafts == spec_logged_.spec_num_drafts || now_s < spec_log_due_s_) return;
  const int64_t drafts = stats.spec_num_drafts - spec_logged_.spec_num_drafts;
  const int64_t drafted = stats.spec_num_draft_tokens - spec_logged_.spec_num_draft_tokens;
  const int64_t accepted = stats.spec_num_accepted_tokens - spec_logged_.spec_num_accepted_tokens;
  std::string per_position;
  for (size_t p = 0; p < stats.spec_num_accepted_per_pos.size(); ++p) {
    const int64_t before = p < spec_logged_.spec_num_accepted_per_pos.size()
                               ? spec_logged_.spec_num_accepted_per_pos[p]
                               : 0;
    per_position += fmt::format("{}{:.3f}", p ? ", " : "",
                                static_cast<double>(stats.spec_num_accepted_per_pos[p] - before) /
                                    static_cast<double>(drafts));
  }
  TLOG_INFO(
      "engine {}: SpecDecoding metrics: mean acceptance length {:.2f}, accepted {} of {} "
      "draft tokens ({:.1f} %), per-position acceptance rate [{}]",
      dp_rank_, 1.0 + static_cast<double>(accepted) / static_cast<double>(drafts), accepted,
      drafted, drafted > 0 ? 100.0 * accepted / drafted : 0.0, per_position);
  spec_logged_ = stats;
  spec_log_due_s_ = now_s + 10.0;
}

void EngineCore::Count(const protocol::EngineOutputs& outputs) {
  for (const protocol::EngineOutput& output : outputs.outputs) {
    num_generation_tokens_ += static_cast<int64_t>(output.new_token_ids.size());
    if (output.finish_reason != static_cast<uint8_t>(protocol::FinishReason::kNone)) {
      ++num_requests_finished_;
    }
  }
}

protocol::EngineOutputs EngineCore::TakePendingOutputs() {
  ++stats_seq_;
  protocol::EngineOutputs outputs;
  outputs.outputs.swap(pending_outputs_);
  Count(outputs);
  outputs.stats = Stats();
  return outputs;
}

std::vector<protocol::EngineOutput> EngineCore::ExecuteAndUpdate(const protocol::StepPlan& plan) {
  if (plan.scheduled_request_ids.empty()) {
    if (!lockstep_) return {};
    // A dummy step: the workers enter the EP collectives with no tokens.
    ++num_dummy_steps_;
    Result<protocol::StepResult> result = executor_->ExecuteStep(plan);
    if (!result.ok()) {
      TLOG_ERROR("engine {}: dummy step {} failed: {}", dp_rank_, plan.step_id,
                 result.status().ToString());
    }
    return {};
  }
  Result<protocol::StepResult> result = executor_->ExecuteStep(plan);
  if (!result.ok()) {
    TLOG_ERROR("engine {}: step {} failed, failing its {} requests: {}", dp_rank_, plan.step_id,
               plan.scheduled_request_ids.size(), result.status().ToString());
    return scheduler_.FailScheduled(plan, result.status().ToString());
  }
  return scheduler_.UpdateFromOutput(plan, *result);
}

protocol::EngineStats EngineCore::Stats() const {
  protocol::EngineStats stats = scheduler_.MakeStats();
  stats.num_requests_finished = num_requests_finished_;
  stats.num_generation_tokens = num_generation_tokens_;
  stats.dp_rank = dp_rank_;
  stats.seq = stats_seq_;
  stats.num_waves = num_waves_;
  stats.num_dummy_steps = num_dummy_steps_;
  stats.lockstep = lockstep_;
  stats.num_received_by_client = num_received_by_client_;
  return stats;
}

void EngineCore::NoteReceived(int32_t client_index) {
  if (client_index < 0) return;
  if (static_cast<size_t>(client_index) >= num_received_by_client_.size()) {
    num_received_by_client_.resize(static_cast<size_t>(client_index) + 1, 0);
  }
  ++num_received_by_client_[static_cast<size_t>(client_index)];
}

}  // namespace tandem::engine
