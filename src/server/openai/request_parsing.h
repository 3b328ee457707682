// Parsing and validation shared by /v1/completions and /v1/chat/completions: the JSON body,
// the model name, and the sampling fields → protocol::SamplingParams.
// Unknown top-level fields are ignored (vLLM's default: logged, not rejected), so clients that
// send newer OpenAI fields keep working. Every rejection is a 400 naming the field in `param`.
// Reference: vLLM entrypoints/openai/protocol.py (CompletionRequest, ChatCompletionRequest,
// to_sampling_params) and vllm/sampling_params.py SamplingParams._verify_args (ranges).
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/sampling_params.h"
#include "server/errors.h"
#include "server/server_config.h"

namespace tandem::server::openai {

enum class Endpoint { kCompletions, kChatCompletions };

// Request fields common to both endpoints, validated.
struct GenerationRequest {
  std::string model;                  // the served name the response carries
  protocol::SamplingParams sampling;  // max_tokens = 0 until ResolveMaxTokens when not given
  bool max_tokens_given = false;      // max_tokens / max_completion_tokens was in the body
  int32_t n = 1;                      // choices; each is its own engine request
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  std::vector<std::string> stop;  // stop strings
  bool include_stop_str_in_output = false;
  bool skip_special_tokens = true;
  bool return_token_ids = false;    // vLLM extension: prompt_token_ids + choice token_ids
  int32_t data_parallel_rank = -1;  // X-data-parallel-rank header: pin a DP rank; -1 = any
  // vLLM's extra fields (request_fields.h).
  std::string request_id;                   // the body's request_id ("" = none)
  std::optional<bool> add_special_tokens;   // absent: completions true, chat false (vLLM)
  int32_t truncate_prompt_tokens = 0;       // 0 = keep the prompt; k > 0: its last k tokens;
                                            // -1: its last max_model_len tokens
  bool return_tokens_as_token_ids = false;  // logprobs name tokens "token_id:<id>"
  bool continuous_usage_stats = false;      // streamed chunks each carry usage so far
  std::vector<std::string> bad_words;       // tokenized into sampling.bad_words_token_ids
  std::string cache_salt;                   // prefix-cache isolation (EngineRequest)
  int64_t priority = 0;                     // --scheduling-policy priority: lower = earlier
};

// The X-data-parallel-rank header ("" = not pinned → -1). Errors: 400 unless a non-negative
// integer.
ApiResult<int32_t> ParseDataParallelRankHeader(const std::string& value);

// A JSON value's type with its article, for messages: "an array", "an object", "a string",
// "a number", "a boolean", "null".
std::string JsonTypeWithArticle(const nlohmann::json& value);
std::string JsonTypeWithArticle(const nlohmann::ordered_json& value);

using OrderedJson = nlohmann::ordered_json;

// The string member `key` of `object` (a JSON object): `absent` when the key is missing or null,
// nullopt when it holds anything but a string — so a comparison with an expected value fails
// instead of throwing, as nlohmann's value() does (type_error 302). Never throws.
std::optional<std::string> StringMember(const OrderedJson& object, const char* key,
                                        std::string_view absent);

// Parses `text` keeping key order; a discarded value (is_discarded()) for anything that is not
// JSON, including numbers beyond double range and nesting deeper than kMaxJsonDepth.
// Never throws.
nlohmann::ordered_json ParseOrderedOrDiscarded(std::string_view text);

// Parses a request body as a JSON object keeping key order (what a chat template's tojson and a
// structured-output schema keep), nesting limited while parsing (text/bounded_json.h), so no
// later recursive walk of the request meets deep input. The one parse of a body: endpoints that
// want nlohmann::json's sorted view convert this value. Errors: 400 on an empty body, malformed
// JSON, invalid UTF-8, a non-object, or nesting deeper than kMaxJsonDepth (the message
// names the limit).
ApiResult<OrderedJson> ParseOrderedJsonObject(std::string_view body);

// Reads the common fields of `body` for `endpoint`. Errors: 404 (param "model") for a model
// not in config.served_model_names; 400 naming the field for a wrong type or a value out of
// range. Endpoint-specific fields (prompt, messages, logprobs, echo) are parsed by callers.
// `ordered_body`: the same body with its key order (structured-output schemas keep their
// property order); null = take `body`'s (sorted) order.
ApiResult<GenerationRequest> ParseGenerationRequest(const nlohmann::json& body, Endpoint endpoint,
                                                    const ServerConfig& config,
                                                    const OrderedJson* ordered_body = nullptr);

// `endpoint_fields` and the top-level fields both endpoints read (model, the sampling fields,
// n, stop, stream, logprobs, logit_bias, user, response_format and the structured-output
// fields): an endpoint's known fields for WarnIgnoredFields (request_fields.h).
std::set<std::string> WithGenerationFieldNames(std::initializer_list<const char*> endpoint_fields);

// 400 when stop_token_ids or logit_bias name a token outside [0, vocab_size) (the
// tokenizer's vocabulary), naming the field and the id.
ApiResult<bool> CheckTokenIdsInVocabulary(const GenerationRequest& request, int32_t vocab_size);

// Sets sampling.max_tokens when it was not given (completions: 16; chat: max_model_len −
// prompt length, `num_prompt_tokens` long) and checks prompt + max_tokens <= max_model_len,
// with vLLM's message. Errors: 400 naming the prompt field ("prompt" for completions, "messages"
// for chat) when the prompt alone fills the context, "max_tokens" when prompt + max_tokens does
// not fit, "min_tokens" when it exceeds the resolved max_tokens.
ApiResult<bool> ResolveMaxTokens(GenerationRequest* request, int32_t num_prompt_tokens,
                                 Endpoint endpoint, const ServerConfig& config);

// The count a request's `field` (logprobs, top_logprobs, prompt_logprobs) asks for, checked
// against --max-logprobs (config.max_logprobs; -1 = no cap) as vLLM does: k in [0, max], or -1
// for every token of the vocabulary, which needs --max-logprobs -1 and returns kAllLogprobs
// (the worker clamps it to its logits row). Errors: 400 naming `field` and the allowed range.
inline constexpr int32_t kAllLogprobs = INT32_MAX;
ApiResult<int32_t> CheckLogprobsCount(const char* field, int64_t k, const ServerConfig& config);

// Typed optional getters: absent or null → `fallback`; wrong type → 400 naming `field`.
ApiResult<bool> GetBool(const nlohmann::json& body, const char* field, bool fallback);
ApiResult<int64_t> GetInt(const nlohmann::json& body, const char* field, int64_t fallback);
ApiResult<double> GetNumber(const nlohmann::json& body, const char* field, double fallback);

}  // namespace tandem::server::openai
