#include "server/openai/completions.h"

#include <fmt/format.h>

#include <mutex>

#include "core/clock.h"
#include "server/json_dump.h"
#include "server/openai/completions_types.h"
#include "server/openai/generation.h"
#include "server/openai/logprobs_json.h"
#include "server/openai/serving.h"
#include "server/sse.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

// One choice of a completions call.
struct ChoiceState {
  ChoiceResult result;                // whole responses: the choice's deltas, appended
  int32_t text_offset = 0;            // bytes of text sent so far (logprobs' text_offset)
  bool echoed = false;                // streaming: the echo went out with the first chunk
  int32_t num_completion_tokens = 0;  // streaming: tokens so far (continuous_usage_stats)
};

// State shared by the callbacks of one call: P prompts × n choices, one Generation per prompt
// (choice j of prompt p is the response's choice p * n + j, as vLLM indexes them). Callbacks of
// different prompts may come from different threads: `mutex` orders them.
struct CompletionCall {
  const ServerContext* context = nullptr;
  CompletionRequest request;
  std::string id;
  int64_t created = 0;
  std::vector<std::string> echo_text;  // per prompt: its text when echo
  std::shared_ptr<ResponseSink> sink;
  std::mutex mutex;
  std::vector<ChoiceState> choices;  // [P * n]
  GenerationUsage usage;             // summed over the prompts that are done
  int32_t prompts_done = 0;
  bool failed = false;  // an error was sent: nothing more goes out

  int32_t n() const { return request.common.n; }
  int32_t PromptOf(int32_t index) const { return index / n(); }

  // `first`: the choice's first chunk (or the whole choice), which carries the echo and the
  // prompt's logprobs. With echo + logprobs the logprobs cover the prompt then the output, the
  // prompt's first token without any (vLLM).
  json ChoiceJson(int32_t index, const std::string& text, const std::vector<int32_t>& token_ids,
                  const std::vector<protocol::PositionLogprobs>& logprobs,
                  const std::vector<protocol::PositionLogprobs>& prompt_logprobs,
                  const std::string& finish_reason, const json& stop_reason, bool first) {
    json choice = {{"index", index},
                   {"text", text},
                   {"logprobs", nullptr},
                   {"finish_reason", finish_reason.empty() ? json(nullptr) : json(finish_reason)},
                   {"stop_reason", stop_reason}};
    const std::vector<int32_t>& prompt = request.prompts[PromptOf(index)];
    const bool as_ids = request.common.return_tokens_as_token_ids;
    if (request.logprobs >= 0 && first && request.echo) {
      std::vector<int32_t> ids = prompt;
      ids.insert(ids.end(), token_ids.begin(), token_ids.end());
      std::vector<protocol::PositionLogprobs> lps = prompt_logprobs;
      lps.insert(lps.end(), logprobs.begin(), logprobs.end());
      choice["logprobs"] = CompletionLogprobsJson(*context->tokenizer, ids, lps, 0, as_ids,
                                                  /*num_leading_null=*/1);
    } else if (request.logprobs >= 0) {
      choice["logprobs"] = CompletionLogprobsJson(*context->tokenizer, token_ids, logprobs,
                                                  choices[index].text_offset, as_ids);
    }
    if (first && request.common.sampling.prompt_logprobs >= 0) {
      choice["prompt_logprobs"] =
          PromptLogprobsJson(*context->tokenizer, prompt, prompt_logprobs, as_ids);
    }
    if (request.common.return_token_ids) {
      choice["token_ids"] = token_ids;
      if (first) choice["prompt_token_ids"] = prompt;
    }
    return choice;
  }

  json Envelope() const {
    return {{"id", id},
            {"object", "text_completion"},
            {"created", created},
            {"model", request.common.model}};
  }

  void OnStreamDelta(const ChoiceDelta& original) {
    // echo with max_tokens 0: the generated token is not part of the answer.
    ChoiceDelta delta = original;
    if (request.prompt_only) {
      delta.text.clear();
      delta.token_ids.clear();
      delta.logprobs.clear();
      if (!delta.finish_reason.empty()) delta.finish_reason = "length";
      delta.stop_reason = nullptr;
    }
    ChoiceState& state = choices[delta.index];
    state.num_completion_tokens += static_cast<int32_t>(delta.token_ids.size());
    if (delta.text.empty() && delta.finish_reason.empty() && !request.common.return_token_ids &&
        request.logprobs < 0) {
      return;  // nothing a client can see yet (e.g. a partial UTF-8 character)
    }
    std::string text = delta.text;
    const bool first = !state.echoed;
    if (first) {
      state.echoed = true;
      text = echo_text[PromptOf(delta.index)] + text;
    }
    json chunk = Envelope();
    chunk["choices"] = json::array(
        {ChoiceJson(delta.index, text, delta.token_ids, delta.logprobs, delta.prompt_logprobs,
                    delta.finish_reason, delta.stop_reason, first)});
    state.text_offset += static_cast<int32_t>(text.size());
    // stream_options.continuous_usage_stats: every chunk carries the usage so far (vLLM).
    if (request.common.include_usage && request.common.continuous_usage_stats) {
      chunk["usage"] =
          UsageJson({static_cast<int32_t>(request.prompts[PromptOf(delta.index)].size()),
                     state.num_completion_tokens, 0});
    }
    sink->SendStreamData(SseEvent(DumpJson(chunk)));
  }

  void OnStreamDone() {
    EndSseStream(*sink,
                 request.common.include_usage ? UsageChunk(Envelope(), usage) : json(nullptr));
  }

  void OnDelta(const ChoiceDelta& delta) { choices[delta.index].result.Append(delta); }

  void OnDone() {
    json body = Envelope();
    body["choices"] = json::array();
    for (int32_t i = 0; i < static_cast<int32_t>(choices.size()); ++i) {
      ChoiceResult c = choices[i].result;
      if (request.prompt_only) {  // echo with max_tokens 0: the prompt alone
        c.text.clear();
        c.token_ids.clear();
        c.logprobs.clear();
        c.finish_reason = "length";
        c.stop_reason = nullptr;
      }
      const std::string& echo = echo_text[PromptOf(i)];
      choices[i].text_offset = static_cast<int32_t>(echo.size());
      json choice = ChoiceJson(i, echo + c.text, c.token_ids, c.logprobs, c.prompt_logprobs,
                               c.finish_reason, c.stop_reason, true);
      // vLLM's CompletionResponseChoice: prompt_logprobs null when not asked for.
      if (!choice.contains("prompt_logprobs")) choice["prompt_logprobs"] = nullptr;
      body["choices"].push_back(std::move(choice));
    }
    body["usage"] = UsageJson(usage);
    body["system_fingerprint"] = nullptr;  // vLLM's CompletionResponse sends it, null
    sink->SendResponse(200, "application/json", DumpJson(body));
  }

  // One prompt's Generation ended: add its usage; the last one ends the response.
  void OnPromptDone(const GenerationUsage& prompt_usage) {
    usage.prompt_tokens += prompt_usage.prompt_tokens;
    usage.completion_tokens += request.prompt_only ? 0 : prompt_usage.completion_tokens;
    usage.cached_tokens += prompt_usage.cached_tokens;
    usage.prompt_tokens_details = prompt_usage.prompt_tokens_details;  // the flag's
    if (++prompts_done < static_cast<int32_t>(request.prompts.size())) return;
    if (request.common.stream) {
      OnStreamDone();
    } else {
      OnDone();
    }
  }

  // ServeGeneration aborted the other prompts' Generations before this.
  void OnError(const ApiError& error) {
    failed = true;
    if (request.common.stream) return SendStreamError(*sink, error);
    SendError(*sink, error);
  }

  // Callbacks of prompt p's Generation, its choice indexes shifted to p * n.
  Generation::Callbacks CallbacksFor(const std::shared_ptr<CompletionCall>& self, int32_t p) {
    Generation::Callbacks callbacks;
    const int32_t offset = p * n();
    callbacks.on_delta = [self, offset](const ChoiceDelta& d) {
      std::lock_guard lock(self->mutex);
      if (self->failed) return;
      ChoiceDelta shifted = d;
      shifted.index += offset;
      if (self->request.common.stream) {
        self->OnStreamDelta(shifted);
      } else {
        self->OnDelta(shifted);
      }
    };
    callbacks.on_done = [self](const GenerationUsage& u) {
      std::lock_guard lock(self->mutex);
      if (!self->failed) self->OnPromptDone(u);
    };
    callbacks.on_error = [self](const ApiError& e) {
      std::lock_guard lock(self->mutex);
      if (!self->failed) self->OnError(e);
    };
    return callbacks;
  }
};

}  // namespace

void HandleCompletions(const ServerContext& context, const HttpRequest& http_request,
                       std::shared_ptr<ResponseSink> sink) {
  auto body = ParseOrderedJsonObject(http_request.body);
  if (!body.ok()) return SendError(*sink, body.error());
  auto parsed = ParseCompletionRequest(body.value(), context);
  if (!parsed.ok()) return SendError(*sink, parsed.error());
  auto pinned_rank = ParseDataParallelRankHeader(DataParallelRankHeader(http_request));
  if (!pinned_rank.ok()) return SendError(*sink, pinned_rank.error());
  parsed.value().common.data_parallel_rank = pinned_rank.value();

  auto call = std::make_shared<CompletionCall>();
  call->context = &context;
  call->request = std::move(parsed).value();
  const std::string header_id(http_request.Header("x-request-id"));
  call->id = ResponseId("cmpl-", header_id, call->request.common);
  call->created = UnixSeconds();
  call->sink = sink;
  const int32_t num_prompts = static_cast<int32_t>(call->request.prompts.size());
  call->choices.resize(num_prompts * call->request.common.n);
  for (const std::vector<int32_t>& prompt : call->request.prompts) {
    call->echo_text.push_back(
        call->request.echo
            ? context.tokenizer->Decode(prompt, call->request.common.skip_special_tokens)
            : std::string());
  }
  const std::string engine_id = EngineIdBase(call->id, header_id, call->request.common);
  std::vector<GenerationSpec> generations;
  for (int32_t p = 0; p < num_prompts; ++p) {
    // One prompt keeps the plain engine ids ("<id>-<choice>"); more get "<id>-p<prompt>".
    generations.push_back({num_prompts == 1 ? engine_id : fmt::format("{}-p{}", engine_id, p),
                           call->request.prompts[p], call->CallbacksFor(call, p)});
  }
  ServeGeneration(context, call->request.common, http_request.arrival_time_s,
                  std::move(generations), sink);
}

}  // namespace tandem::server::openai
