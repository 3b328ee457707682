#include "server/openai/completions.h"

#include "core/clock.h"
#include "server/json_dump.h"
#include "server/openai/completions_types.h"
#include "server/openai/generation.h"
#include "server/sse.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

// State shared by the callbacks of one call.
struct CompletionCall {
  const ServerContext* context = nullptr;
  CompletionRequest request;
  std::string id;
  int64_t created = 0;
  std::string echo_text;  // prompt text when echo
  std::shared_ptr<ResponseSink> sink;
  std::vector<ChoiceResult> choices;        // non-streaming
  std::vector<int32_t> text_offsets;        // per choice: bytes of text sent so far
  std::vector<bool> echoed;                 // streaming: echo sent for this choice

  json ChoiceJson(int32_t index, const std::string& text, const std::vector<int32_t>& token_ids,
                  const std::vector<protocol::PositionLogprobs>& logprobs,
                  const std::string& finish_reason, const json& stop_reason, bool first) {
    json choice = {{"index", index}, {"text", text}, {"logprobs", nullptr},
                   {"finish_reason", finish_reason.empty() ? json(nullptr) : json(finish_reason)},
                   {"stop_reason", stop_reason}};
    if (request.logprobs >= 0) {
      choice["logprobs"] = CompletionLogprobsJson(*context->tokenizer, token_ids, logprobs,
                                                  text_offsets[index]);
    }
    if (request.common.return_token_ids) {
      choice["token_ids"] = token_ids;
      if (first) choice["prompt_token_ids"] = request.prompt_token_ids;
    }
    return choice;
  }

  json Envelope() const {
    return {{"id", id}, {"object", "text_completion"}, {"created", created},
            {"model", request.common.model}};
  }

  void OnStreamDelta(const ChoiceDelta& delta) {
    if (delta.text.empty() && delta.finish_reason.empty() && !request.common.return_token_ids &&
        request.logprobs < 0) {
      return;  // nothing a client can see yet (e.g. a partial UTF-8 character)
    }
    std::string text = delta.text;
    const bool first = !echoed[delta.index];
    if (first) {
      echoed[delta.index] = true;
      text = echo_text + text;
    }
    json chunk = Envelope();
    chunk["choices"] = json::array({ChoiceJson(delta.index, text, delta.token_ids, delta.logprobs,
                                               delta.finish_reason, delta.stop_reason, first)});
    text_offsets[delta.index] += static_cast<int32_t>(text.size());
    sink->SendStreamData(SseEvent(DumpJson(chunk)));
  }

  void OnStreamDone(const GenerationUsage& usage) {
    if (request.common.include_usage) {
      json chunk = Envelope();
      chunk["choices"] = json::array();
      chunk["usage"] = UsageJson(usage);
      sink->SendStreamData(SseEvent(DumpJson(chunk)));
    }
    sink->SendStreamData(SseDone());
    sink->EndStream();
  }

  void OnDelta(const ChoiceDelta& delta) { choices[delta.index].Append(delta); }

  void OnDone(const GenerationUsage& usage) {
    json body = Envelope();
    body["choices"] = json::array();
    for (int32_t i = 0; i < static_cast<int32_t>(choices.size()); ++i) {
      const ChoiceResult& c = choices[i];
      text_offsets[i] = static_cast<int32_t>(echo_text.size());
      body["choices"].push_back(ChoiceJson(i, echo_text + c.text, c.token_ids, c.logprobs,
                                           c.finish_reason, c.stop_reason, true));
    }
    body["usage"] = UsageJson(usage);
    sink->SendResponse(200, "application/json", DumpJson(body));
  }
};

}  // namespace

void SendError(ResponseSink& sink, const ApiError& error) {
  sink.SendResponse(HttpStatusFor(error.status.code()), "application/json", ErrorBody(error));
}

void HandleCompletions(const ServerContext& context, const HttpRequest& http_request,
                       std::shared_ptr<ResponseSink> sink) {
  auto body = ParseJsonObject(http_request.body);
  if (!body.ok()) return SendError(*sink, body.error());
  auto parsed = ParseCompletionRequest(body.value(), context);
  if (!parsed.ok()) return SendError(*sink, parsed.error());
  auto pinned_rank = ParseDataParallelRankHeader(DataParallelRankHeader(http_request));
  if (!pinned_rank.ok()) return SendError(*sink, pinned_rank.error());
  parsed.value().common.data_parallel_rank = pinned_rank.value();
  if (!context.engine->IsReady()) {
    return SendError(*sink, {Unavailable(context.engine->NotReadyReason()), ""});
  }

  auto call = std::make_shared<CompletionCall>();
  call->context = &context;
  call->request = std::move(parsed).value();
  call->id = RandomRequestId("cmpl-");
  call->created = UnixSeconds();
  call->sink = sink;
  const int32_t n = call->request.common.n;
  call->choices.resize(n);
  call->text_offsets.assign(n, 0);
  call->echoed.assign(n, false);
  if (call->request.echo) {
    call->echo_text = context.tokenizer->Decode(call->request.prompt_token_ids,
                                                call->request.common.skip_special_tokens);
  }
  const bool stream = call->request.common.stream;

  Generation::Callbacks callbacks;
  if (stream) {
    callbacks.on_delta = [call](const ChoiceDelta& d) { call->OnStreamDelta(d); };
    callbacks.on_done = [call](const GenerationUsage& u) { call->OnStreamDone(u); };
    callbacks.on_error = [call](const ApiError& e) {
      call->sink->SendStreamData(SseEvent(ErrorBody(e)));
      call->sink->SendStreamData(SseDone());
      call->sink->EndStream();
    };
  } else {
    callbacks.on_delta = [call](const ChoiceDelta& d) { call->OnDelta(d); };
    callbacks.on_done = [call](const GenerationUsage& u) { call->OnDone(u); };
    callbacks.on_error = [call](const ApiError& e) { SendError(*call->sink, e); };
  }
  auto generation = std::make_shared<Generation>(
      context, call->id, call->request.prompt_token_ids, call->request.common,
      http_request.arrival_time_s, std::move(callbacks));
  sink->SetOnDisconnect([weak = std::weak_ptr<Generation>(generation)] {
    if (auto g = weak.lock()) g->Abort();
  });
  if (stream) sink->StartStream("text/event-stream");  // queued before any engine output
  Status status = generation->Start();
  if (!status.ok()) {
    if (!stream) return SendError(*sink, {status, ""});
    sink->SendStreamData(SseEvent(ErrorBody({status, ""})));
    sink->SendStreamData(SseDone());
    sink->EndStream();
  }
}

}  // namespace tandem::server::openai
