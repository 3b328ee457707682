#include "server/anthropic/messages.h"

#include <optional>

#include "server/anthropic/message_stream.h"
#include "server/anthropic/messages_response.h"
#include "server/anthropic/messages_types.h"
#include "server/json_dump.h"
#include "server/openai/chat_completions_types.h"
#include "server/openai/chat_output.h"
#include "server/openai/chat_prompt.h"
#include "server/openai/generation.h"
#include "server/openai/request_parsing.h"
#include "server/openai/serving.h"

namespace tandem::server::anthropic {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// One /v1/messages call in flight; the Generation's callbacks own it.
struct MessagesCall {
  const ServerContext* context = nullptr;
  openai::ChatCompletionRequest request;
  openai::ChatPrompt prompt;
  std::string id;
  std::shared_ptr<ResponseSink> sink;
  openai::ChoiceResult result;                     // the reply so far (text: whole replies)
  std::optional<openai::ChatOutputParser> parser;  // streamed replies
  std::optional<MessageStream> stream;             // streamed replies

  openai::ChatOutputParser NewParser() const {
    return openai::ChatOutputParser(context->config, request.input, prompt.text);
  }

  // The whole reply: parsed at once, as chat's message.
  void OnDone(const openai::GenerationUsage& usage) {
    openai::ChatOutputParser whole = NewParser();
    openai::ChatOutputParts parts = whole.Feed(result.text);
    parts.Append(whole.Finish());
    int32_t num_tool_use = 0;
    json content = ContentBlocks(std::move(parts), &num_tool_use);
    const StopReason stop =
        ToStopReason(result.finish_reason, result.stop_reason, num_tool_use > 0);
    sink->SendResponse(
        200, "application/json",
        DumpJson(MessageJson(id, request.common.model, std::move(content), &stop, usage)));
  }

  void OnStreamDelta(const openai::ChoiceDelta& delta) {
    openai::ChatOutputParts parts = parser->Feed(delta.text);
    if (!delta.finish_reason.empty()) {
      parts.Append(parser->Finish());
      result.finish_reason = delta.finish_reason;
      result.stop_reason = delta.stop_reason;
    }
    stream->Write(std::move(parts));
  }
};

openai::Generation::Callbacks MakeCallbacks(const std::shared_ptr<MessagesCall>& call,
                                            bool stream) {
  openai::Generation::Callbacks callbacks;
  if (stream) {
    callbacks.on_delta = [call](const openai::ChoiceDelta& d) { call->OnStreamDelta(d); };
    callbacks.on_done = [call](const openai::GenerationUsage& u) {
      call->stream->Finish(call->result.finish_reason, call->result.stop_reason, u);
    };
    callbacks.on_error = [call](const ApiError& e) { call->stream->Fail(e); };
  } else {
    callbacks.on_delta = [call](const openai::ChoiceDelta& d) { call->result.Append(d); };
    callbacks.on_done = [call](const openai::GenerationUsage& u) { call->OnDone(u); };
    callbacks.on_error = [call](const ApiError& e) { SendError(*call->sink, e); };
  }
  return callbacks;
}

// Parses and translates the body, validates it as chat does, pins the DP rank, checks the tool
// choice against the server's flags, renders and tokenizes the prompt (PrepareChatPrompt).
ApiResult<std::shared_ptr<MessagesCall>> PrepareCall(const ServerContext& context,
                                                     const HttpRequest& http_request) {
  TANDEM_API_ASSIGN_OR_RETURN(OJson body, openai::ParseOrderedJsonObject(http_request.body));
  TANDEM_API_ASSIGN_OR_RETURN(OJson chat_body,
                              ToChatCompletionBody(body, MessagesEndpoint::kMessages));
  auto call = std::make_shared<MessagesCall>();
  call->context = &context;
  TANDEM_API_ASSIGN_OR_RETURN(call->request,
                              openai::ParseChatCompletionRequest(chat_body, context));
  call->request.input.client_gone = http_request.client_gone;
  TANDEM_API_ASSIGN_OR_RETURN(
      call->request.common.data_parallel_rank,
      openai::ParseDataParallelRankHeader(DataParallelRankHeader(http_request)));
  TANDEM_API_ASSIGN_OR_RETURN(call->prompt, openai::PrepareChatPrompt(context, &call->request));
  return call;
}

}  // namespace

void HandleMessages(const ServerContext& context, const HttpRequest& http_request,
                    std::shared_ptr<ResponseSink> sink) {
  auto prepared = PrepareCall(context, http_request);
  if (!prepared.ok()) return SendError(*sink, prepared.error());
  std::shared_ptr<MessagesCall> call = std::move(prepared).value();
  call->id = RandomRequestId("msg_");
  call->sink = sink;
  const bool stream = call->request.common.stream;
  openai::ServeHooks hooks;
  hooks.send_error = anthropic::SendError;  // errors in Anthropic's shape
  if (stream) {
    call->parser.emplace(call->NewParser());
    call->stream.emplace(sink);
    // message_start before any token: it carries the prompt's token count.
    hooks.open_stream = [raw = call.get()] {
      openai::GenerationUsage usage;
      usage.prompt_tokens = static_cast<int32_t>(raw->prompt.token_ids.size());
      raw->stream->Start(
          MessageJson(raw->id, raw->request.common.model, json::array(), nullptr, usage));
    };
  }
  std::vector<openai::GenerationSpec> generations;
  generations.push_back({call->id, call->prompt.token_ids, MakeCallbacks(call, stream)});
  openai::ServeGeneration(context, call->request.common, http_request.arrival_time_s,
                          std::move(generations), sink, hooks);
}

void HandleCountTokens(const ServerContext& context, const HttpRequest& http_request,
                       std::shared_ptr<ResponseSink> sink) {
  auto count = [&]() -> ApiResult<int32_t> {
    TANDEM_API_ASSIGN_OR_RETURN(OJson body, openai::ParseOrderedJsonObject(http_request.body));
    TANDEM_API_ASSIGN_OR_RETURN(OJson chat_body,
                                ToChatCompletionBody(body, MessagesEndpoint::kCountTokens));
    // The model check (404 for one not served), as a generation would do it.
    TANDEM_API_ASSIGN_OR_RETURN(
        openai::GenerationRequest unused,
        openai::ParseGenerationRequest(json(chat_body), openai::Endpoint::kChatCompletions,
                                       context.config, &chat_body));
    (void)unused;
    TANDEM_API_ASSIGN_OR_RETURN(openai::ChatInput input,
                                openai::ParseChatInput(chat_body, context.config));
    input.client_gone = http_request.client_gone;
    TANDEM_API_ASSIGN_OR_RETURN(openai::ChatPrompt prompt,
                                openai::TokenizeChatPrompt(context, input));
    return static_cast<int32_t>(prompt.token_ids.size());
  }();
  if (!count.ok()) return SendError(*sink, count.error());
  sink->SendResponse(200, "application/json", DumpJson({{"input_tokens", count.value()}}));
}

}  // namespace tandem::server::anthropic
