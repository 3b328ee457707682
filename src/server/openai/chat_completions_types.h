// Wire types of POST /v1/chat/completions: request parsing (messages, logprobs/top_logprobs,
// chat template arguments) and the JSON of chat logprobs.
// Reference: vLLM entrypoints/openai/protocol.py ChatCompletionRequest /
// ChatCompletionResponse / ChatCompletionStreamResponse / ChatCompletionLogProbs.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "server/errors.h"
#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::openai {

struct ChatCompletionRequest {
  GenerationRequest common;
  nlohmann::json messages;              // [{"role", "content": string}], content parts joined
  bool add_generation_prompt = true;
  nlohmann::json chat_template_kwargs = nlohmann::json::object();  // extra template variables
  bool logprobs = false;
  int32_t top_logprobs = 0;
};

// Parses and validates a chat body (no templating yet). Errors: 400 naming the field
// (messages missing/empty/malformed, top_logprobs out of range or without logprobs, ...).
ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(const nlohmann::json& body,
                                                            const ServerConfig& config);

// The template context: messages, add_generation_prompt, bos_token, eos_token, then every
// chat_template_kwargs entry as a top-level variable (as HF apply_chat_template(**kwargs)).
nlohmann::json ChatTemplateContext(const ChatCompletionRequest& request,
                                   const text::Tokenizer& tokenizer);

// ChatCompletionLogProbs {"content": [{"token","logprob","bytes","top_logprobs":[...]}]}.
nlohmann::json ChatLogprobsJson(const text::Tokenizer& tokenizer,
                                const std::vector<int32_t>& token_ids,
                                const std::vector<protocol::PositionLogprobs>& logprobs);

}  // namespace tandem::server::openai
