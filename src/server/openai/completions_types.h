// Wire types of POST /v1/completions: request parsing (prompt forms, echo, logprobs) and the
// JSON of responses and stream chunks.
// Reference: vLLM entrypoints/openai/protocol.py CompletionRequest / CompletionResponse /
// CompletionStreamResponse / CompletionLogProbs; OpenAI API reference "Completions".
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "server/errors.h"
#include "server/openai/generation.h"
#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::openai {

struct CompletionRequest {
  GenerationRequest common;
  std::vector<int32_t> prompt_token_ids;  // tokenized prompt (BOS added as the tokenizer says)
  bool echo = false;                      // prepend the prompt text to the completion
  int32_t logprobs = -1;                  // -1: none; k in [0, max_logprobs]: top-k per token
};

// Parses and validates a /v1/completions body. `prompt` may be a string, an array of token
// ids, or an array holding one string. Errors: 400 naming the field (prompt missing, empty,
// batched, token id outside the vocab, logprobs out of range, context too long, ...), 404 for
// an unknown model.
ApiResult<CompletionRequest> ParseCompletionRequest(const nlohmann::json& body,
                                                    const ServerContext& context);

// `usage` object: prompt/completion/total tokens and prompt_tokens_details.cached_tokens.
nlohmann::json UsageJson(const GenerationUsage& usage);

// CompletionLogProbs for `token_ids` (tokens, token_logprobs, top_logprobs, text_offset),
// offsets counted in bytes from `text_offset_start`.
nlohmann::json CompletionLogprobsJson(const text::Tokenizer& tokenizer,
                                      const std::vector<int32_t>& token_ids,
                                      const std::vector<protocol::PositionLogprobs>& logprobs,
                                      int32_t text_offset_start);

}  // namespace tandem::server::openai
