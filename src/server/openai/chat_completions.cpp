#include "server/openai/chat_completions.h"

#include "core/clock.h"
#include "server/json_dump.h"
#include "server/openai/chat_completions_types.h"
#include "server/openai/chat_output.h"
#include "server/openai/chat_prompt.h"
#include "server/openai/generation.h"
#include "server/openai/logprobs_json.h"
#include "server/openai/request_parsing.h"
#include "server/openai/serving.h"
#include "server/sse.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

// One choice of a chat call.
struct ChoiceState {
  explicit ChoiceState(ChatOutputParser p) : parser(std::move(p)) {}
  ChatOutputParser parser;            // streaming: reasoning / content / tool calls so far
  ChoiceResult result;                // whole replies: the choice's deltas, appended
  bool role_sent = false;             // streaming: the first chunk (with the role) went out
  int32_t num_completion_tokens = 0;  // streaming: tokens so far (continuous_usage_stats)
};

// One /v1/chat/completions call in flight: the validated request, its prompt, and the n
// choices' state. Owned by the Generation's callbacks; they are serialized (generation.h).
struct ChatCall {
  const ServerContext* context = nullptr;
  ChatCompletionRequest request;
  std::string prompt;
  std::vector<int32_t> prompt_token_ids;
  std::string id;
  int64_t created = 0;
  std::shared_ptr<ResponseSink> sink;
  std::vector<ChoiceState> choices;  // [n]

  json Envelope(const char* object) const {
    return {{"id", id}, {"object", object}, {"created", created}, {"model", request.common.model}};
  }
  json Logprobs(const std::vector<int32_t>& ids,
                const std::vector<protocol::PositionLogprobs>& logprobs) const {
    if (!request.logprobs) return nullptr;
    return ChatLogprobsJson(*context->tokenizer, ids, logprobs,
                            request.common.return_tokens_as_token_ids);
  }
  // vLLM serving_chat: "tool_calls" when the tool parser found a call (tool_choice auto), or
  // for tool_choice "required" output that ended with "stop"; a named function, or "required"
  // cut by max_tokens, keeps the engine's reason ("length" says the arguments are cut).
  json Finish(const std::string& reason, bool tool_called) const {
    if (reason.empty()) return nullptr;
    switch (request.input.tool_choice) {
      case ToolChoice::kNamed:
        return reason;
      case ToolChoice::kRequired:
        return tool_called && reason == "stop" ? json("tool_calls") : json(reason);
      default:
        return tool_called ? json("tool_calls") : json(reason);
    }
  }
  ChatOutputParser NewParser() const {
    return ChatOutputParser(context->config, request.input, prompt);
  }

  // The reasoning under the names --reasoning-field picks: `reasoning` (current vLLM),
  // `reasoning_content` (older vLLM, DeepSeek's API), or both (the default, while clients move).
  void PutReasoning(json& object, const json& value) const {
    if (!request.input.include_reasoning) return;  // parsed out, dropped (vLLM)
    const std::string& field = context->config.reasoning_field;
    if (field != "reasoning_content") object["reasoning"] = value;
    if (field != "reasoning") object["reasoning_content"] = value;
  }

  void SendChunk(json choice, bool first) {
    json chunk = Envelope("chat.completion.chunk");
    if (first && request.common.return_token_ids) chunk["prompt_token_ids"] = prompt_token_ids;
    // stream_options.continuous_usage_stats: every chunk carries the usage so far (vLLM).
    if (request.common.include_usage && request.common.continuous_usage_stats) {
      chunk["usage"] =
          UsageJson({static_cast<int32_t>(prompt_token_ids.size()),
                     choices[choice["index"].get<int32_t>()].num_completion_tokens, 0});
    }
    chunk["choices"] = json::array({std::move(choice)});
    sink->SendStreamData(SseEvent(DumpJson(chunk)));
  }

  // One ChoiceDelta → chunks: reasoning, content, then per tool call one chunk with
  // index/id/type/name and one with the arguments. Logprobs and token ids ride on the first,
  // finish_reason on the last.
  void OnStreamDelta(const ChoiceDelta& d) {
    ChoiceState& state = choices[d.index];
    state.num_completion_tokens += static_cast<int32_t>(d.token_ids.size());
    if (!state.role_sent) {  // OpenAI: the first chunk of each choice carries the role
      state.role_sent = true;
      SendChunk({{"index", d.index},
                 {"delta", {{"role", "assistant"}, {"content", ""}}},
                 {"logprobs", nullptr},
                 {"finish_reason", nullptr}},
                true);
    }
    ChatOutputParser& parser = state.parser;
    const int32_t calls_before = parser.num_tool_calls();
    ChatOutputParts parts = parser.Feed(d.text);
    const bool finished = !d.finish_reason.empty();
    if (finished) parts.Append(parser.Finish());
    std::vector<json> deltas;
    if (!parts.reasoning.empty() && request.input.include_reasoning) {
      json delta = json::object();
      PutReasoning(delta, parts.reasoning);
      deltas.push_back(std::move(delta));
    }
    if (!parts.content.empty()) deltas.push_back({{"content", parts.content}});
    for (const ToolCallStreamDelta& call : parts.call_deltas) {  // forced calls, as they come
      json function = {{"arguments", call.arguments}};
      json entry = {{"index", call.index}};
      if (!call.name.empty()) {
        entry["id"] = RandomRequestId("chatcmpl-tool-");
        entry["type"] = "function";
        function = {{"name", call.name}, {"arguments", call.arguments}};
      }
      entry["function"] = std::move(function);
      deltas.push_back({{"tool_calls", json::array({std::move(entry)})}});
    }
    for (size_t k = 0; k < parts.calls.size(); ++k) {
      json call = ToolCallJson(parts.calls[k]);
      const int32_t index = calls_before + static_cast<int32_t>(k);
      deltas.push_back(
          {{"tool_calls",
            json::array(
                {{{"index", index},
                  {"id", call["id"]},
                  {"type", "function"},
                  {"function", {{"name", call["function"]["name"]}, {"arguments", ""}}}}})}});
      deltas.push_back(
          {{"tool_calls",
            json::array({{{"index", index},
                          {"function", {{"arguments", call["function"]["arguments"]}}}}})}});
    }
    if (deltas.empty()) {
      if (!finished && !request.logprobs && !request.common.return_token_ids) return;
      deltas.push_back(finished ? json::object() : json{{"content", ""}});
    }
    for (size_t k = 0; k < deltas.size(); ++k) {
      const bool last = k + 1 == deltas.size();
      json choice = {{"index", d.index},
                     {"delta", std::move(deltas[k])},
                     {"logprobs", k == 0 ? Logprobs(d.token_ids, d.logprobs) : json(nullptr)},
                     {"finish_reason",
                      last ? Finish(d.finish_reason, parser.num_tool_calls() > 0) : json(nullptr)}};
      if (last && finished) choice["stop_reason"] = d.stop_reason;
      if (request.common.return_token_ids) {
        choice["token_ids"] = k == 0 ? d.token_ids : std::vector<int32_t>();
      }
      SendChunk(std::move(choice), false);
    }
  }

  void OnStreamDone(const GenerationUsage& usage) {
    EndSseStream(*sink, request.common.include_usage
                            ? UsageChunk(Envelope("chat.completion.chunk"), usage)
                            : json(nullptr));
  }

  void OnDelta(const ChoiceDelta& d) { choices[d.index].result.Append(d); }

  // The assistant message: content (null when empty next to reasoning or tool calls),
  // reasoning (PutReasoning) with --reasoning-parser, tool_calls ([] when none, as vLLM).
  json Message(const ChoiceResult& c, bool* tool_called) const {
    ChatOutputParser parser = NewParser();
    ChatOutputParts parts = parser.Feed(c.text);
    parts.Append(parser.Finish());
    json message = {{"role", "assistant"}};
    const bool null_content =
        parts.content.empty() && (!parts.reasoning.empty() || !parts.calls.empty());
    if (!parts.calls.empty()) {  // text around the calls, without the blank lines between them
      const size_t end = parts.content.find_last_not_of(" \n\r\t");
      parts.content.resize(end == std::string::npos ? 0 : end + 1);
    }
    message["content"] = null_content || (!parts.calls.empty() && parts.content.empty())
                             ? json(nullptr)
                             : json(parts.content);
    if (parser.reasoning_enabled()) {
      PutReasoning(message, parts.reasoning.empty() ? json(nullptr) : json(parts.reasoning));
    }
    message["tool_calls"] = json::array();
    for (const text::ToolCall& call : parts.calls)
      message["tool_calls"].push_back(ToolCallJson(call));
    *tool_called = !parts.calls.empty();
    return message;
  }

  void OnDone(const GenerationUsage& usage) {
    json body = Envelope("chat.completion");
    body["choices"] = json::array();
    for (int32_t i = 0; i < static_cast<int32_t>(choices.size()); ++i) {
      const ChoiceResult& c = choices[i].result;
      bool tool_called = false;
      json message = Message(c, &tool_called);
      json choice = {{"index", i},
                     {"message", std::move(message)},
                     {"logprobs", Logprobs(c.token_ids, c.logprobs)},
                     {"finish_reason", Finish(c.finish_reason, tool_called)},
                     {"stop_reason", c.stop_reason}};
      if (request.common.return_token_ids) choice["token_ids"] = c.token_ids;
      body["choices"].push_back(std::move(choice));
    }
    body["usage"] = UsageJson(usage);
    if (request.common.return_token_ids) body["prompt_token_ids"] = prompt_token_ids;
    // vLLM's ChatCompletionResponse sends both, null unless asked for / known.
    body["prompt_logprobs"] = nullptr;
    body["system_fingerprint"] = nullptr;
    if (request.common.sampling.prompt_logprobs >= 0 && !choices.empty()) {
      body["prompt_logprobs"] = PromptLogprobsJson(*context->tokenizer, prompt_token_ids,
                                                   choices[0].result.prompt_logprobs,
                                                   request.common.return_tokens_as_token_ids);
    }
    sink->SendResponse(200, "application/json", DumpJson(body));
  }

  void OnError(const ApiError& error) {
    if (request.common.stream) return SendStreamError(*sink, error);
    SendError(*sink, error);
  }

  Generation::Callbacks MakeCallbacks(const std::shared_ptr<ChatCall>& self) const {
    Generation::Callbacks callbacks;
    if (request.common.stream) {
      callbacks.on_delta = [self](const ChoiceDelta& d) { self->OnStreamDelta(d); };
      callbacks.on_done = [self](const GenerationUsage& u) { self->OnStreamDone(u); };
    } else {
      callbacks.on_delta = [self](const ChoiceDelta& d) { self->OnDelta(d); };
      callbacks.on_done = [self](const GenerationUsage& u) { self->OnDone(u); };
    }
    callbacks.on_error = [self](const ApiError& e) { self->OnError(e); };
    return callbacks;
  }
};

// The one parse of the body, its validation, the pinned DP rank and the prompt (rendered,
// tokenized, max_tokens resolved). Errors: those of ParseChatCompletionRequest,
// ParseDataParallelRankHeader and PrepareChatPrompt.
ApiResult<std::shared_ptr<ChatCall>> PrepareCall(const ServerContext& context,
                                                 const HttpRequest& http_request) {
  // Keeping key order: tojson prints tool schemas as the client sent them.
  TANDEM_API_ASSIGN_OR_RETURN(OrderedJson body, ParseOrderedJsonObject(http_request.body));
  auto call = std::make_shared<ChatCall>();
  call->context = &context;
  TANDEM_API_ASSIGN_OR_RETURN(call->request, ParseChatCompletionRequest(body, context));
  call->request.input.client_gone = http_request.client_gone;
  TANDEM_API_ASSIGN_OR_RETURN(call->request.common.data_parallel_rank,
                              ParseDataParallelRankHeader(DataParallelRankHeader(http_request)));
  TANDEM_API_ASSIGN_OR_RETURN(ChatPrompt prompt, PrepareChatPrompt(context, &call->request));
  call->prompt = std::move(prompt.text);
  call->prompt_token_ids = std::move(prompt.token_ids);
  return call;
}

}  // namespace

void HandleChatCompletions(const ServerContext& context, const HttpRequest& http_request,
                           std::shared_ptr<ResponseSink> sink) {
  auto prepared = PrepareCall(context, http_request);
  if (!prepared.ok()) return SendError(*sink, prepared.error());
  std::shared_ptr<ChatCall> call = std::move(prepared).value();
  const std::string header_id(http_request.Header("x-request-id"));
  call->id = ResponseId("chatcmpl-", header_id, call->request.common);
  call->created = UnixSeconds();
  call->sink = sink;
  for (int32_t i = 0; i < call->request.common.n; ++i) {
    call->choices.emplace_back(call->NewParser());
    // Streams send forced tool calls as they are generated (vLLM); whole responses at the end.
    if (call->request.common.stream) call->choices.back().parser.StreamForcedCalls();
  }
  GenerationSpec spec{EngineIdBase(call->id, header_id, call->request.common),
                      call->prompt_token_ids, call->MakeCallbacks(call)};
  std::vector<GenerationSpec> generations;
  generations.push_back(std::move(spec));
  ServeGeneration(context, call->request.common, http_request.arrival_time_s,
                  std::move(generations), sink);
}

}  // namespace tandem::server::openai
