#include "server/openai/generation.h"

#include <fmt/format.h>

#include <optional>

#include "core/clock.h"
#include "core/logging.h"
#include "server/openai/request_log.h"
#include "server/request_metrics.h"
#include "text/incremental_detokenizer.h"
#include "text/stop_string_matcher.h"

namespace tandem::server::openai {

using protocol::FinishReason;

struct Generation::Choice {
  int32_t index = 0;
  std::string engine_request_id;
  std::unique_ptr<text::IncrementalDetokenizer> detokenizer;
  std::unique_ptr<text::StopStringMatcher> stop_matcher;
  std::optional<RequestMetrics> metrics;  // its /metrics observations (and DP rank)
  int32_t num_output_tokens = 0;          // tokens pushed through the detokenizer so far
  bool finished = false;
};

Generation::Generation(const ServerContext& context, std::string request_id,
                       std::vector<int32_t> prompt_token_ids, GenerationRequest request,
                       double arrival_time_s, Callbacks callbacks)
    : context_(context),
      request_id_(std::move(request_id)),
      prompt_token_ids_(std::move(prompt_token_ids)),
      request_(std::move(request)),
      arrival_time_s_(arrival_time_s),
      callbacks_(std::move(callbacks)) {
  usage_.prompt_tokens = static_cast<int32_t>(prompt_token_ids_.size());
  usage_.prompt_tokens_details = context_.config.enable_prompt_tokens_details;
  for (int32_t i = 0; i < request_.n; ++i) {
    auto choice = std::make_unique<Choice>();
    choice->index = i;
    choice->engine_request_id = fmt::format("{}-{}", request_id_, i);
    choice->detokenizer = std::make_unique<text::IncrementalDetokenizer>(
        *context_.tokenizer, prompt_token_ids_, request_.skip_special_tokens);
    choice->stop_matcher = std::make_unique<text::StopStringMatcher>(
        request_.stop, request_.include_stop_str_in_output);
    choice->metrics.emplace(*context_.metrics, arrival_time_s_, usage_.prompt_tokens);
    choices_.push_back(std::move(choice));
  }
}

Generation::~Generation() = default;

Status Generation::Start() {
  LogReceivedRequest(context_, request_id_, prompt_token_ids_, request_);
  for (int32_t i = 0; i < request_.n; ++i) {
    protocol::EngineRequest engine_request;
    engine_request.request_id = choices_[i]->engine_request_id;
    engine_request.prompt_token_ids = prompt_token_ids_;
    engine_request.sampling = request_.sampling;
    if (engine_request.sampling.has_seed) engine_request.sampling.seed += i;
    engine_request.eos_token_ids = context_.config.eos_token_ids;
    engine_request.arrival_time_s = arrival_time_s_;
    engine_request.data_parallel_rank = request_.data_parallel_rank;
    engine_request.cache_salt = request_.cache_salt;
    engine_request.priority = request_.priority;
    // The engine client owns the Generation through this callback until the choice ends.
    // It stores the DP rank it chose while we hold mutex_, under which OnOutput and Abort
    // read it.
    Status status;
    {
      std::lock_guard lock(mutex_);
      status = context_.engine->AddRequest(
          std::move(engine_request),
          [self = shared_from_this(), i](const protocol::EngineOutput& output) {
            self->OnOutput(i, output);
          },
          choices_[i]->metrics->mutable_dp_rank());
    }
    if (!status.ok()) {
      {
        std::lock_guard lock(mutex_);
        failed_or_aborted_ = true;
      }
      for (int32_t j = 0; j < i; ++j) context_.engine->AbortRequest(choices_[j]->engine_request_id);
      return status;
    }
    // The client may have gone while this request waited for a preprocessing thread, or goes
    // now: Abort() then ran before this choice reached the engine, so its abort found nothing.
    // Abort it here, after its add, and add no more.
    bool aborted = false;
    {
      std::lock_guard lock(mutex_);
      aborted = failed_or_aborted_;
    }
    if (aborted) {
      context_.engine->AbortRequest(choices_[i]->engine_request_id);
      return Status::Ok();
    }
  }
  return Status::Ok();
}

void Generation::Abort() {
  std::vector<std::string> to_abort;
  {
    std::lock_guard lock(mutex_);
    if (failed_or_aborted_) return;
    failed_or_aborted_ = true;
    for (auto& choice : choices_) {
      if (choice->finished) continue;
      to_abort.push_back(choice->engine_request_id);
      choice->metrics->OnEnded("abort");
    }
  }
  for (const std::string& id : to_abort) context_.engine->AbortRequest(id);
}

void Generation::OnOutput(int32_t index, const protocol::EngineOutput& output) {
  std::vector<std::string> to_abort;
  {
    std::lock_guard lock(mutex_);
    Choice& choice = *choices_[index];
    if (failed_or_aborted_ || choice.finished) return;
    const double now_s = MonotonicSeconds();
    const auto finish = static_cast<FinishReason>(output.finish_reason);
    if (finish == FinishReason::kError) {
      failed_or_aborted_ = true;
      for (auto& other : choices_) {
        if (!other->finished && other->index != index) to_abort.push_back(other->engine_request_id);
      }
      choice.metrics->OnEnded("error");
      TLOG_ERROR("request {} failed in the engine: {}", choice.engine_request_id, output.error);
      // 503: the engine (e.g. a DP rank that died) could not finish it; retrying may succeed.
      callbacks_.on_error(ApiError{Unavailable(fmt::format("engine error: {}", output.error)), ""});
    } else {
      if (index == 0 && output.num_cached_tokens > usage_.cached_tokens) {
        usage_.cached_tokens = output.num_cached_tokens;
      }
      ChoiceDelta delta;
      delta.index = index;
      delta.prompt_logprobs = output.prompt_logprobs;
      const int32_t num_new = static_cast<int32_t>(output.new_token_ids.size());
      bool stopped_by_string = false;
      for (int32_t k = 0; k < num_new && !stopped_by_string; ++k) {
        const int32_t token_id = output.new_token_ids[k];
        delta.token_ids.push_back(token_id);
        if (k < static_cast<int32_t>(output.new_logprobs.size())) {
          delta.logprobs.push_back(output.new_logprobs[k]);
        }
        // vLLM: stop strings end only in text of tokens past min_tokens (the text of the
        // first min_tokens tokens can neither hold nor end one).
        const bool may_stop = ++choice.num_output_tokens > request_.sampling.min_tokens;
        auto step = choice.stop_matcher->Push(choice.detokenizer->Push(token_id), may_stop);
        delta.text += step.text;
        if (step.matched_stop) {
          stopped_by_string = true;
          delta.stop_reason = *step.matched_stop;
        }
      }
      // Counted as delivered: with speculative decoding one output carries several tokens, and
      // those after a stop string are dropped.
      const auto num_kept = static_cast<int32_t>(delta.token_ids.size());
      usage_.completion_tokens += num_kept;
      choice.metrics->OnOutput(output, num_kept, now_s);
      if (stopped_by_string) {
        // The engine does not know about stop strings: end the request there.
        if (finish == FinishReason::kNone) to_abort.push_back(choice.engine_request_id);
        FinishChoice(choice, delta, "stop");
      } else if (finish != FinishReason::kNone) {
        auto tail = choice.stop_matcher->Push(choice.detokenizer->Flush());
        delta.text += tail.text;
        if (tail.matched_stop) {
          delta.stop_reason = *tail.matched_stop;
        } else {
          delta.text += choice.stop_matcher->Flush();
          if (output.stop_token_id >= 0) delta.stop_reason = output.stop_token_id;
        }
        FinishChoice(choice, delta,
                     finish == FinishReason::kLength && !tail.matched_stop ? "length" : "stop");
      } else {
        callbacks_.on_delta(delta);
      }
    }
  }
  for (const std::string& id : to_abort) context_.engine->AbortRequest(id);
}

void Generation::FinishChoice(Choice& choice, ChoiceDelta& delta,
                              const std::string& finish_reason) {
  choice.finished = true;
  delta.finish_reason = finish_reason;
  choice.metrics->OnFinished(finish_reason, MonotonicSeconds());
  callbacks_.on_delta(delta);
  if (++num_finished_ == request_.n) callbacks_.on_done(usage_);
}

void ChoiceResult::Append(const ChoiceDelta& delta) {
  text += delta.text;
  token_ids.insert(token_ids.end(), delta.token_ids.begin(), delta.token_ids.end());
  logprobs.insert(logprobs.end(), delta.logprobs.begin(), delta.logprobs.end());
  if (!delta.prompt_logprobs.empty()) prompt_logprobs = delta.prompt_logprobs;
  if (!delta.finish_reason.empty()) {
    finish_reason = delta.finish_reason;
    stop_reason = delta.stop_reason;
  }
}

}  // namespace tandem::server::openai
