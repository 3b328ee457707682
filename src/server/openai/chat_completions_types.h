// Wire types of POST /v1/chat/completions: the request and its parsing (messages, tools,
// logprobs/top_logprobs, chat template arguments). The response JSON is chat_completions.cpp's;
// logprobs are logprobs_json.h's.
// Reference: vLLM entrypoints/openai/protocol.py ChatCompletionRequest /
// ChatCompletionResponse / ChatCompletionStreamResponse / ChatCompletionLogProbs.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "server/errors.h"
#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// tool_choice: "none" | "auto" (default when tools are given) | "required" | a named function.
enum class ToolChoice { kNone, kAuto, kRequired, kNamed };

// The messages and template arguments shared by /v1/chat/completions and /tokenize. Kept as
// ordered JSON so tojson prints tool schemas in the request's key order.
struct ChatInput {
  nlohmann::ordered_json messages;  // content as one string; tool_calls arguments as objects
  nlohmann::ordered_json tools;     // the request's `tools` array; null when absent
  ToolChoice tool_choice = ToolChoice::kNone;
  std::string tool_choice_name;     // kNamed: the function
  bool parallel_tool_calls = true;  // false: at most one call is answered (vLLM keeps the first)
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  nlohmann::ordered_json chat_template_kwargs = nlohmann::ordered_json::object();
  nlohmann::ordered_json documents;  // vLLM `documents` (RAG): a template variable; null = none
  std::string reasoning_effort;      // "low" | "medium" | "high": a template variable
  std::optional<std::string> chat_template;  // the request's own (--trust-request-chat-template)
  bool include_reasoning = true;             // false: the reasoning is parsed out and dropped
  // The connection's HttpRequest::client_gone (not a body field): the render stops when the
  // client has gone. Null: never.
  std::shared_ptr<const std::atomic<bool>> client_gone;
};

struct ChatCompletionRequest {
  GenerationRequest common;
  ChatInput input;
  bool logprobs = false;  // top_logprobs lives in common.sampling.logprobs (-1: none)
};

// Parses messages, tools, tool_choice, add_generation_prompt, continue_final_message and
// chat_template_kwargs. Errors: 400 naming the field (messages missing/empty, an unknown role,
// content of the wrong type, a tool without a function name, tool_choice naming no tool, both
// add_generation_prompt and continue_final_message, more messages or tools than
// config.max_chat_messages / max_chat_tools, ...).
ApiResult<ChatInput> ParseChatInput(const nlohmann::ordered_json& body, const ServerConfig& config);

// Parses and validates a chat body, the one call that turns it into the request (no
// templating yet: PrepareChatPrompt does that): the common fields, the chat input, the grammar
// that enforces tool_choice "required" / a named function, logprobs, and the token ids and
// words checked against context.tokenizer's vocabulary (CheckTokenIdsInVocabulary,
// ResolveTokenFields). Unknown top-level fields are ignored, named in one warning. Errors (400
// naming the field, 404 for an unknown model): those of ParseGenerationRequest, ParseChatInput
// and the vocabulary checks; tool_choice "required" or named next to another structured output;
// top_logprobs out of range or without logprobs.
ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(const nlohmann::ordered_json& body,
                                                            const ServerContext& context);

}  // namespace tandem::server::openai
