#include "server/openai/chat_completions.h"

#include "core/clock.h"
#include "server/json_dump.h"
#include "server/openai/chat_completions_types.h"
#include "server/openai/request_fields.h"
#include "server/openai/request_parsing.h"
#include "server/openai/chat_output.h"
#include "text/reasoning_parser.h"
#include "server/openai/chat_prompt.h"
#include "server/openai/completions.h"
#include "server/openai/completions_types.h"
#include "server/openai/generation.h"
#include "server/sse.h"
#include "text/chat_template.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

struct ChatCall {
  const ServerContext* context = nullptr;
  ChatCompletionRequest request;
  std::string prompt;
  std::vector<int32_t> prompt_token_ids;
  std::string id;
  int64_t created = 0;
  std::shared_ptr<ResponseSink> sink;
  std::vector<ChoiceResult> choices;
  std::vector<bool> role_sent;
  std::vector<ChatOutputParser> parsers;  // one per choice (streaming)
  std::vector<int32_t> completion_tokens;  // streaming: tokens of each choice so far

  json Envelope(const char* object) const {
    return {{"id", id}, {"object", object}, {"created", created}, {"model", request.common.model}};
  }
  json Logprobs(const std::vector<int32_t>& ids,
                const std::vector<protocol::PositionLogprobs>& logprobs) const {
    if (!request.logprobs) return nullptr;
    return ChatLogprobsJson(*context->tokenizer, ids, logprobs,
                            request.common.return_tokens_as_token_ids);
  }
  // vLLM: "tool_calls" whenever the parser found a call.
  static json Finish(const std::string& reason, bool tool_called) {
    if (reason.empty()) return nullptr;
    return tool_called ? json("tool_calls") : json(reason);
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
      chunk["usage"] = UsageJson({static_cast<int32_t>(prompt_token_ids.size()),
                                  completion_tokens[choice["index"].get<int32_t>()], 0});
    }
    chunk["choices"] = json::array({std::move(choice)});
    sink->SendStreamData(SseEvent(DumpJson(chunk)));
  }

  // One ChoiceDelta → chunks: reasoning, content, then per tool call one chunk with
  // index/id/type/name and one with the arguments. Logprobs and token ids ride on the first,
  // finish_reason on the last.
  void OnStreamDelta(const ChoiceDelta& d) {
    completion_tokens[d.index] += static_cast<int32_t>(d.token_ids.size());
    const bool first = !role_sent[d.index];
    if (first) {  // OpenAI: the first chunk of each choice carries the role
      role_sent[d.index] = true;
      SendChunk({{"index", d.index}, {"delta", {{"role", "assistant"}, {"content", ""}}},
                 {"logprobs", nullptr}, {"finish_reason", nullptr}},
                true);
    }
    ChatOutputParser& parser = parsers[d.index];
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
    for (size_t k = 0; k < parts.calls.size(); ++k) {
      json call = ToolCallJson(parts.calls[k]);
      const int32_t index = calls_before + static_cast<int32_t>(k);
      deltas.push_back({{"tool_calls", json::array({{{"index", index}, {"id", call["id"]},
                                                     {"type", "function"},
                                                     {"function", {{"name", call["function"]["name"]},
                                                                   {"arguments", ""}}}}})}});
      deltas.push_back({{"tool_calls", json::array({{{"index", index},
                                                     {"function", {{"arguments",
                                                                    call["function"]["arguments"]}}}}})}});
    }
    if (deltas.empty()) {
      if (!finished && !request.logprobs && !request.common.return_token_ids) return;
      deltas.push_back(finished ? json::object() : json{{"content", ""}});
    }
    for (size_t k = 0; k < deltas.size(); ++k) {
      const bool last = k + 1 == deltas.size();
      json choice = {{"index", d.index}, {"delta", std::move(deltas[k])},
                     {"logprobs", k == 0 ? Logprobs(d.token_ids, d.logprobs) : json(nullptr)},
                     {"finish_reason", last ? Finish(d.finish_reason,
                                                     parser.num_tool_calls() > 0)
                                            : json(nullptr)}};
      if (last && finished) choice["stop_reason"] = d.stop_reason;
      if (request.common.return_token_ids) {
        choice["token_ids"] = k == 0 ? d.token_ids : std::vector<int32_t>();
      }
      SendChunk(std::move(choice), false);
    }
  }

  void OnStreamDone(const GenerationUsage& usage) {
    if (request.common.include_usage) {
      json chunk = Envelope("chat.completion.chunk");
      chunk["choices"] = json::array();
      chunk["usage"] = UsageJson(usage);
      sink->SendStreamData(SseEvent(DumpJson(chunk)));
    }
    sink->SendStreamData(SseDone());
    sink->EndStream();
  }

  void OnDelta(const ChoiceDelta& d) { choices[d.index].Append(d); }

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
                             ? json(nullptr) : json(parts.content);
    if (parser.reasoning_enabled()) {
      PutReasoning(message, parts.reasoning.empty() ? json(nullptr) : json(parts.reasoning));
    }
    message["tool_calls"] = json::array();
    for (const text::ToolCall& call : parts.calls) message["tool_calls"].push_back(ToolCallJson(call));
    *tool_called = !parts.calls.empty();
    return message;
  }

  void OnDone(const GenerationUsage& usage) {
    json body = Envelope("chat.completion");
    body["choices"] = json::array();
    for (int32_t i = 0; i < static_cast<int32_t>(choices.size()); ++i) {
      const ChoiceResult& c = choices[i];
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
    if (request.common.sampling.prompt_logprobs >= 0 && !choices.empty()) {
      body["prompt_logprobs"] =
          PromptLogprobsJson(*context->tokenizer, prompt_token_ids, choices[0].prompt_logprobs,
                             request.common.return_tokens_as_token_ids);
    }
    sink->SendResponse(200, "application/json", DumpJson(body));
  }
};

// Renders and tokenizes the prompt; fills call->prompt(_token_ids) and resolves max_tokens.
ApiResult<bool> BuildPrompt(const ServerContext& context, ChatCall* call) {
  TANDEM_API_ASSIGN_OR_RETURN(ChatPrompt prompt, PrepareChatPrompt(context, &call->request));
  call->prompt = std::move(prompt.text);
  call->prompt_token_ids = std::move(prompt.token_ids);
  return true;
}

}  // namespace

void HandleChatCompletions(const ServerContext& context, const HttpRequest& http_request,
                           std::shared_ptr<ResponseSink> sink) {
  // Keeping key order: tojson prints tool schemas as the client sent them.
  auto body = ParseOrderedJsonObject(http_request.body);
  if (!body.ok()) return SendError(*sink, body.error());
  auto parsed = ParseChatCompletionRequest(body.value(), context.config);
  if (!parsed.ok()) return SendError(*sink, parsed.error());
  auto ids_ok = CheckTokenIdsInVocabulary(parsed.value().common, context.tokenizer->vocab_size());
  if (!ids_ok.ok()) return SendError(*sink, ids_ok.error());
  ids_ok = ResolveTokenFields(&parsed.value().common, *context.tokenizer);
  if (!ids_ok.ok()) return SendError(*sink, ids_ok.error());
  auto pinned_rank = ParseDataParallelRankHeader(DataParallelRankHeader(http_request));
  if (!pinned_rank.ok()) return SendError(*sink, pinned_rank.error());
  parsed.value().common.data_parallel_rank = pinned_rank.value();
  auto tool_choice = CheckToolChoice(parsed.value().input, context.config);
  if (!tool_choice.ok()) return SendError(*sink, tool_choice.error());
  auto call = std::make_shared<ChatCall>();
  call->context = &context;
  call->request = std::move(parsed).value();
  auto built = BuildPrompt(context, call.get());
  if (!built.ok()) return SendError(*sink, built.error());
  if (!context.engine->IsReady()) {
    return SendError(*sink, {Unavailable(context.engine->NotReadyReason()), ""});
  }
  call->id = ResponseId("chatcmpl-", std::string(http_request.Header("x-request-id")),
                        call->request.common);
  call->created = UnixSeconds();
  call->sink = sink;
  call->choices.resize(call->request.common.n);
  call->role_sent.assign(call->request.common.n, false);
  call->completion_tokens.assign(call->request.common.n, 0);
  for (int32_t i = 0; i < call->request.common.n; ++i) call->parsers.push_back(call->NewParser());
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
  const std::string engine_id = EngineIdBase(
      call->id, std::string(http_request.Header("x-request-id")), call->request.common);
  auto generation = std::make_shared<Generation>(context, engine_id, call->prompt_token_ids,
                                                 call->request.common,
                                                 http_request.arrival_time_s, std::move(callbacks));
  sink->SetOnDisconnect([weak = std::weak_ptr<Generation>(generation)] {
    if (auto g = weak.lock()) g->Abort();
  });
  if (stream) sink->StartStream("text/event-stream");
  Status status = generation->Start();
  if (!status.ok()) {
    if (!stream) return SendError(*sink, {status, ""});
    sink->SendStreamData(SseEvent(ErrorBody({status, ""})));
    sink->SendStreamData(SseDone());
    sink->EndStream();
  }
}

}  // namespace tandem::server::openai
