// Wire types of POST /v1/chat/completions: request parsing (messages, logprobs/top_logprobs,
// chat template arguments) and the JSON of chat logprobs.
// Reference: vLLM entrypoints/openai/protocol.py ChatCompletionRequest /
// ChatCompletionResponse / ChatCompletionStreamResponse / ChatCompletionLogProbs.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

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
  nlohmann::ordered_json documents;      // vLLM `documents` (RAG): a template variable; null = none
  std::string reasoning_effort;          // "low" | "medium" | "high": a template variable
  std::optional<std::string> chat_template;  // the request's own (--trust-request-chat-template)
  bool include_reasoning = true;         // false: the reasoning is parsed out and dropped
};

struct ChatCompletionRequest {
  GenerationRequest common;
  ChatInput input;
  bool logprobs = false;
  int32_t top_logprobs = 0;
};

// Parses messages, tools, tool_choice, add_generation_prompt, continue_final_message and
// chat_template_kwargs. Errors: 400 naming the field (messages missing/empty, an unknown role,
// content of the wrong type, a tool without a function name, tool_choice naming no tool, both
// add_generation_prompt and continue_final_message, more messages or tools than
// config.max_chat_messages / max_chat_tools, ...).
ApiResult<ChatInput> ParseChatInput(const nlohmann::ordered_json& body, const ServerConfig& config);

// Parses and validates a chat body (no templating yet). Unknown top-level fields are ignored
// (logged at debug). Errors: those of ParseChatInput and ParseGenerationRequest, top_logprobs
// out of range or without logprobs.
ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(const nlohmann::ordered_json& body,
                                                            const ServerConfig& config);

// The template context: --default-chat-template-kwargs, overridden by the request's
// chat_template_kwargs (each a top-level variable, as HF apply_chat_template(**kwargs)), then
// messages, tools (when given), add_generation_prompt, bos_token, eos_token.
nlohmann::ordered_json ChatTemplateContext(const ChatInput& input, const ServerConfig& config,
                                           const text::Tokenizer& tokenizer);

// ChatCompletionLogProbs {"content": [{"token","logprob","bytes","top_logprobs":[...]}]}.
// `tokens_as_ids` (return_tokens_as_token_ids): each token is written "token_id:<id>".
nlohmann::json ChatLogprobsJson(const text::Tokenizer& tokenizer,
                                const std::vector<int32_t>& token_ids,
                                const std::vector<protocol::PositionLogprobs>& logprobs,
                                bool tokens_as_ids = false);

}  // namespace tandem::server::openai
