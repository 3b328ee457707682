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
  // Tokenized prompts (BOS as add_special_tokens says), one or more: prompt p's choice j is
  // the response's choice p * n + j (vLLM's indexing).
  std::vector<std::vector<int32_t>> prompts;
  bool echo = false;                      // prepend the prompt text to the completion
  bool prompt_only = false;               // echo with max_tokens 0: the prompt alone
  int32_t logprobs = -1;                  // -1: none; k in [0, max_logprobs]: top-k per token
};

// Parses and validates a /v1/completions body. `prompt` may be a string, an array of strings,
// an array of token ids or an array of arrays of token ids (at most 1024 prompts). Errors: 400
// naming the field (prompt missing, empty, mixed, token id outside the vocab, logprobs out of
// range, context too long, ...), 404 for an unknown model.
// `ordered_body`: the same body with its key order (schemas keep their property order).
ApiResult<CompletionRequest> ParseCompletionRequest(const nlohmann::json& body,
                                                    const ServerContext& context,
                                                    const OrderedJson* ordered_body = nullptr);

// `usage` object: prompt/completion/total tokens and prompt_tokens_details: {cached_tokens}
// with --enable-prompt-tokens-details, else null (vLLM).
nlohmann::json UsageJson(const GenerationUsage& usage);

// CompletionLogProbs for `token_ids` (tokens, token_logprobs, top_logprobs, text_offset),
// offsets counted in bytes from `text_offset_start`.
// How logprobs name a token: its bytes, or "token_id:<id>" with return_tokens_as_token_ids.
std::string LogprobTokenName(const text::Tokenizer& tokenizer, int32_t token_id,
                             bool tokens_as_ids);

// vLLM's prompt_logprobs: [null, {"<id>": {"logprob", "rank", "decoded_token"}, ...}, ...], one
// entry per prompt token; entry t > 0 holds prompt token t (its rank) and the top-k there.
nlohmann::json PromptLogprobsJson(const text::Tokenizer& tokenizer,
                                  const std::vector<int32_t>& prompt_token_ids,
                                  const std::vector<protocol::PositionLogprobs>& prompt_logprobs,
                                  bool tokens_as_ids);

// `num_leading_null`: the first entries without logprobs (echo: the prompt's first token).
nlohmann::json CompletionLogprobsJson(const text::Tokenizer& tokenizer,
                                      const std::vector<int32_t>& token_ids,
                                      const std::vector<protocol::PositionLogprobs>& logprobs,
                                      int32_t text_offset_start, bool tokens_as_ids = false,
                                      int32_t num_leading_null = 0);

}  // namespace tandem::server::openai
