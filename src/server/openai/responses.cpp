#include "server/openai/responses.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/clock.h"
#include "server/json_dump.h"
#include "server/openai/chat_output.h"
#include "server/openai/chat_prompt.h"
#include "server/openai/generation.h"
#include "server/openai/request_parsing.h"
#include "server/openai/response_output.h"
#include "server/openai/responses_types.h"
#include "server/openai/serving.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

// One named server-sent event: `event: <type>\ndata: <payload>\n\n` (the Responses API names
// every event; its streams end without `data: [DONE]`).
std::string NamedSseEvent(std::string_view type, std::string_view payload) {
  return fmt::format("event: {}\ndata: {}\n\n", type, payload);
}

// vLLM's words for an id the store does not hold.
ApiError UnknownResponse(const std::string& id, std::string param) {
  return {NotFound(fmt::format("Response with id '{}' not found.", id)), std::move(param)};
}

// The {id} of /v1/responses/{id}.
std::string PathId(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// One POST /v1/responses in flight: the request, its chat translation and prompt, and the
// output being built. Owned by the Generation's callbacks; they are serialized (generation.h).
struct ResponseCall {
  ResponseStore* store = nullptr;
  ResponsesRequest request;
  nlohmann::ordered_json history = nlohmann::ordered_json::array();  // previous turns
  ChatCompletionRequest chat;
  ChatPrompt prompt;
  std::string id;
  int64_t created_at = 0;
  std::shared_ptr<ResponseSink> sink;
  std::optional<ResponseOutputBuilder> output;
  std::string finish_reason;
  int64_t sequence_number = 0;  // of the next streamed event

  json Object(const char* status, json usage) const {
    return ResponseObject(request, chat, id, created_at, status, output->items(), std::move(usage));
  }

  void Emit(json event) {
    event["sequence_number"] = sequence_number++;
    const std::string type = event["type"].get<std::string>();
    sink->SendStreamData(NamedSseEvent(type, DumpJson(event)));
  }

  void OnDelta(const ChoiceDelta& d) {
    output->Feed(d.text, static_cast<int32_t>(d.token_ids.size()));
    if (d.finish_reason.empty()) return;
    finish_reason = d.finish_reason;
    output->Finish(finish_reason == "length");
  }

  void OnDone(const GenerationUsage& usage) {
    const char* status = finish_reason == "length" ? "incomplete" : "completed";
    json body = Object(status, ResponseUsageJson(usage, output->num_reasoning_tokens()));
    if (request.store) {
      nlohmann::ordered_json conversation = history;
      for (const auto& m : request.input_messages) conversation.push_back(m);
      conversation.push_back(output->AssistantMessage());
      store->Put(id, {body, std::move(conversation)});
    }
    if (!request.stream) return sink->SendResponse(200, "application/json", DumpJson(body));
    Emit({{"type", "response.completed"}, {"response", std::move(body)}});
    sink->EndStream();
  }

  // OpenAI's error event (ResponseErrorEvent); the stream ends after it.
  void OnStreamError(const ApiError& error) {
    const int http_status = HttpStatusFor(error.status.code());
    Emit({{"type", "error"},
          {"code", http::OpenAiErrorTypeFor(http_status)},
          {"message", error.status.message()},
          {"param", error.param.empty() ? json(nullptr) : json(error.param)}});
    sink->EndStream();
  }
};

// Everything before generation: the history, the chat request (validated as chat validates
// it), the pinned DP rank, the prompt, and max_output_tokens clamped to the room the prompt
// leaves (as vLLM).
ApiResult<bool> Prepare(const ServerContext& context, const HttpRequest& http_request,
                        ResponseCall* call) {
  const std::string& previous = call->request.previous_response_id;
  if (!previous.empty()) {
    std::optional<StoredResponse> stored = call->store->Get(previous);
    if (!stored) return UnknownResponse(previous, "previous_response_id");
    call->history = std::move(stored->conversation);
  }
  TANDEM_API_ASSIGN_OR_RETURN(call->chat, ToChatRequest(call->request, call->history, context));
  call->chat.input.client_gone = http_request.client_gone;
  GenerationRequest& common = call->chat.common;
  // The response streams its own events, not chat's: the chat body carries no `stream`, but
  // ServeGeneration starts the SSE stream when the request streams.
  common.stream = call->request.stream;
  TANDEM_API_ASSIGN_OR_RETURN(common.data_parallel_rank,
                              ParseDataParallelRankHeader(DataParallelRankHeader(http_request)));
  TANDEM_API_ASSIGN_OR_RETURN(call->prompt, PrepareChatPrompt(context, &call->chat));
  if (call->request.max_output_tokens) {
    common.sampling.max_tokens =
        std::min(common.sampling.max_tokens, *call->request.max_output_tokens);
  }
  return true;
}

Generation::Callbacks MakeCallbacks(const std::shared_ptr<ResponseCall>& call) {
  Generation::Callbacks callbacks;
  callbacks.on_delta = [call](const ChoiceDelta& d) { call->OnDelta(d); };
  callbacks.on_done = [call](const GenerationUsage& u) { call->OnDone(u); };
  if (call->request.stream) {
    callbacks.on_error = [call](const ApiError& e) { call->OnStreamError(e); };
  } else {
    callbacks.on_error = [call](const ApiError& e) { SendError(*call->sink, e); };
  }
  return callbacks;
}

}  // namespace

void HandleCreateResponse(const ServerContext& context, ResponseStore* store,
                          const HttpRequest& http_request, std::shared_ptr<ResponseSink> sink) {
  // Keeping key order: tojson prints tool schemas as the client sent them.
  auto body = ParseOrderedJsonObject(http_request.body);
  if (!body.ok()) return SendError(*sink, body.error());
  auto parsed = ParseResponsesRequest(body.value());
  if (!parsed.ok()) return SendError(*sink, parsed.error());
  auto call = std::make_shared<ResponseCall>();
  call->store = store;
  call->request = std::move(parsed).value();
  auto prepared = Prepare(context, http_request, call.get());
  if (!prepared.ok()) return SendError(*sink, prepared.error());
  // As vLLM: the body's request_id is the response id, else "resp_" + 32 hex digits.
  const std::string& request_id = call->chat.common.request_id;
  call->id = request_id.empty() ? RandomRequestId("resp_") : request_id;
  call->created_at = UnixSeconds();
  call->sink = sink;
  ResponseOutputBuilder::EventSink on_event;
  ResponseCall* raw = call.get();  // the builder is the call's own member
  if (call->request.stream) on_event = [raw](json event) { raw->Emit(std::move(event)); };
  call->output.emplace(ChatOutputParser(context.config, call->chat.input, call->prompt.text),
                       std::move(on_event));
  std::vector<GenerationSpec> generations;
  generations.push_back(
      {EngineIdBase(call->id, std::string(http_request.Header("x-request-id")), call->chat.common),
       call->prompt.token_ids, MakeCallbacks(call)});
  ServeHooks hooks;
  hooks.open_stream = [raw] {  // a streamed response first says response.created, .in_progress
    const json initial = raw->Object("in_progress", nullptr);
    raw->Emit({{"type", "response.created"}, {"response", initial}});
    raw->Emit({{"type", "response.in_progress"}, {"response", initial}});
  };
  ServeGeneration(context, call->chat.common, http_request.arrival_time_s, std::move(generations),
                  sink, hooks);
}

void HandleGetResponse(ResponseStore* store, const HttpRequest& request,
                       std::shared_ptr<ResponseSink> sink) {
  const std::string id = PathId(request.path);
  std::optional<StoredResponse> stored = store->Get(id);
  if (!stored) return SendError(*sink, UnknownResponse(id, ""));
  sink->SendResponse(200, "application/json", DumpJson(stored->response));
}

void HandleDeleteResponse(ResponseStore* store, const HttpRequest& request,
                          std::shared_ptr<ResponseSink> sink) {
  const std::string id = PathId(request.path);
  if (!store->Erase(id)) return SendError(*sink, UnknownResponse(id, ""));
  sink->SendResponse(200, "application/json",
                     DumpJson({{"id", id}, {"object", "response.deleted"}, {"deleted", true}}));
}

}  // namespace tandem::server::openai
