// Logprobs in the JSON shapes the OpenAI endpoints answer with: how a token is named, the chat
// shape (ChatCompletionLogProbs), the completions shape (CompletionLogProbs) and vLLM's
// prompt_logprobs. Shared by /v1/chat/completions and /v1/completions.
// Reference: vLLM entrypoints/openai/serving_chat.py _create_chat_logprobs,
// serving_completion.py _create_completion_logprobs, protocol.py (the shapes).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/engine_output.h"
#include "text/tokenizer.h"

namespace tandem::server::openai {

// How logprobs name a token: its bytes, or "token_id:<id>" with return_tokens_as_token_ids
// (`tokens_as_ids`).
std::string LogprobTokenName(const text::Tokenizer& tokenizer, int32_t token_id,
                             bool tokens_as_ids);

// vLLM's prompt_logprobs: [null, {"<id>": {"logprob", "rank", "decoded_token"}, ...}, ...], one
// entry per prompt token; entry t > 0 holds prompt token t (its rank) and the top-k there.
// `prompt_logprobs[t - 1]` belongs to prompt token t; missing entries end the array early.
nlohmann::json PromptLogprobsJson(const text::Tokenizer& tokenizer,
                                  const std::vector<int32_t>& prompt_token_ids,
                                  const std::vector<protocol::PositionLogprobs>& prompt_logprobs,
                                  bool tokens_as_ids);

// CompletionLogProbs for `token_ids`: {"text_offset", "token_logprobs", "tokens",
// "top_logprobs"}, offsets in bytes counted from `text_offset_start`. `logprobs` is parallel to
// `token_ids` after the first `num_leading_null` entries, which get null logprobs (echo: the
// prompt's first token).
nlohmann::json CompletionLogprobsJson(const text::Tokenizer& tokenizer,
                                      const std::vector<int32_t>& token_ids,
                                      const std::vector<protocol::PositionLogprobs>& logprobs,
                                      int32_t text_offset_start, bool tokens_as_ids = false,
                                      int32_t num_leading_null = 0);

// ChatCompletionLogProbs {"content": [{"token","logprob","bytes","top_logprobs":[...]}]}, one
// entry per token of `token_ids` (logprob 0 where `logprobs` has no entry).
nlohmann::json ChatLogprobsJson(const text::Tokenizer& tokenizer,
                                const std::vector<int32_t>& token_ids,
                                const std::vector<protocol::PositionLogprobs>& logprobs,
                                bool tokens_as_ids = false);

}  // namespace tandem::server::openai
