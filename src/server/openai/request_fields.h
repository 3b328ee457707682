// vLLM's extra request fields, common to /v1/completions and /v1/chat/completions: each one is
// honoured, or refused with a 400 naming it where vLLM refuses it too or tandem has not built
// it; a field no endpoint reads is named in one warning line, as vLLM logs "The following fields
// were present in the request but ignored". Never silence.
//
// Honoured: prompt_logprobs, request_id (the response id's suffix, X-Request-Id header first, as
// vLLM's _base_request_id: ResponseId in serving.h; at most 512 printable bytes, CheckRequestId
// in server/request_id.h), priority (non-zero needs --scheduling-policy priority, as in vLLM),
// allowed_token_ids, bad_words,
// truncate_prompt_tokens, add_special_tokens, return_tokens_as_token_ids,
// stream_options.continuous_usage_stats, cache_salt, spaces_between_special_tokens (accepted:
// like vLLM's fast-tokenizer detokenizer, tandem's never puts spaces between special tokens).
// prompt_logprobs: each prompt token's logprob and top-k (such a request skips prefix-cache
// hits). Refused: suffix, best_of > 1, use_beam_search.
// Reference: vLLM entrypoints/openai/protocol.py (CompletionRequest, ChatCompletionRequest,
// to_sampling_params), v1/sample/logits_processor (allowed token ids, bad words).
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "server/errors.h"
#include "server/openai/request_parsing.h"
#include "text/tokenizer.h"

namespace tandem::server::openai {

// Reads the fields above into `request` (and its sampling params). Errors: 400 naming the
// field for a wrong type, a value out of range, or a refused feature.
ApiResult<bool> ParseRequestFields(const nlohmann::json& body, const ServerConfig& config,
                                   GenerationRequest* request);

// Tokenizes request->bad_words into sampling.bad_words_token_ids (each word with and without
// a leading space, as vLLM's NoBadWordsLogitsProcessor) and checks allowed_token_ids against the
// vocabulary. Errors: 400 naming the field.
ApiResult<bool> ResolveTokenFields(GenerationRequest* request, const text::Tokenizer& tokenizer);

// The prompt cut to its last truncate_prompt_tokens tokens (-1: the last max_model_len), as vLLM
// truncates on the left. No-op when the field was not given.
void TruncatePrompt(const GenerationRequest& request, int32_t max_model_len,
                    std::vector<int32_t>* prompt_token_ids);

// One warning naming the top-level fields of `body` that are not in `known` (vLLM's message).
void WarnIgnoredFields(const nlohmann::json& body, const std::set<std::string>& known);

// The fields ParseRequestFields reads (both endpoints add them to their known sets).
const std::set<std::string>& RequestFieldNames();

}  // namespace tandem::server::openai
