#include "server/openai/completions_types.h"

#include "server/openai/request_fields.h"
#include "server/openai/request_parsing.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tandem::server::openai {

using nlohmann::json;

namespace {

// Top-level fields completions requests read: their own, those both endpoints read and
// request_fields.h's; others are named in one warning (vLLM's behaviour).
const std::set<std::string> kCompletionKnownFields = WithGenerationFieldNames({"prompt", "echo"});

constexpr size_t kMaxPrompts = 1024;  // prompts per request (each × n choices)

// One prompt given as token ids. Errors: 400 naming the bad id.
ApiResult<std::vector<int32_t>> ParseTokenIds(const json& ids, const text::Tokenizer& tokenizer) {
  if (ids.empty()) return BadParam("prompt", "'prompt' must not be empty");
  std::vector<int32_t> out;
  for (const json& id : ids) {
    if (!id.is_number_integer()) {
      return BadParam("prompt", fmt::format("'prompt' token ids must be integers; found {}",
                                            JsonTypeWithArticle(id)));
    }
    // dump(): the id as written (one past int64 is unsigned in JSON; never shown wrapped).
    const bool in_vocab = !(id.is_number_unsigned() && id.get<uint64_t>() > INT32_MAX) &&
                          id.get<int64_t>() >= 0 && id.get<int64_t>() < tokenizer.vocab_size();
    if (!in_vocab) {
      return BadParam("prompt", fmt::format("token id {} in 'prompt' is out of vocabulary "
                                            "[0, {})",
                                            id.dump(), tokenizer.vocab_size()));
    }
    const int64_t value = id.get<int64_t>();
    out.push_back(static_cast<int32_t>(value));
  }
  return out;
}

// vLLM encodes "" like any text: with a tokenizer that adds BOS it is the prompt [BOS] (the
// llama2.c no-prompt case); only a prompt of no tokens is refused.
ApiResult<std::vector<int32_t>> EncodeText(const json& text, const text::Tokenizer& tokenizer,
                                           bool add_special_tokens) {
  std::vector<int32_t> ids = tokenizer.Encode(text.get<std::string>(), add_special_tokens);
  if (ids.empty()) {
    return BadParam("prompt",
                    "'prompt' must not be empty: it encodes to no tokens (vLLM: the "
                    "decoder prompt cannot be empty)");
  }
  return ids;
}

// vLLM's four prompt forms: a string, a list of strings, a list of token ids, a list of lists
// of token ids. Each element of a list of strings / lists is its own prompt.
ApiResult<std::vector<std::vector<int32_t>>> ParsePrompts(const json& body,
                                                          const ServerContext& context,
                                                          bool add_special_tokens) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) return BadParam("prompt", "'prompt' is required");
  const json& prompt = *it;
  const text::Tokenizer& tokenizer = *context.tokenizer;
  std::vector<std::vector<int32_t>> prompts;
  if (prompt.is_string()) {
    TANDEM_API_ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                                EncodeText(prompt, tokenizer, add_special_tokens));
    prompts.push_back(std::move(ids));
    return prompts;
  }
  if (!prompt.is_array() || prompt.empty()) {
    return BadParam(
        "prompt", fmt::format("'prompt' must be a string, an array of strings, an "
                              "array of token ids or an array of arrays of token "
                              "ids; found {}",
                              prompt.is_array() ? "an empty array" : JsonTypeWithArticle(prompt)));
  }
  if (prompt.size() > kMaxPrompts) {
    return BadParam("prompt", fmt::format("at most {} prompts per request; got {}", kMaxPrompts,
                                          prompt.size()));
  }
  if (!prompt[0].is_string() && !prompt[0].is_array()) {
    TANDEM_API_ASSIGN_OR_RETURN(std::vector<int32_t> ids, ParseTokenIds(prompt, tokenizer));
    prompts.push_back(std::move(ids));
    return prompts;
  }
  for (const json& p : prompt) {
    if (p.is_string() != prompt[0].is_string() || (!p.is_string() && !p.is_array())) {
      return BadParam("prompt",
                      "a list of prompts must hold only strings or only arrays of "
                      "token ids");
    }
    TANDEM_API_ASSIGN_OR_RETURN(
        std::vector<int32_t> ids,
        p.is_string() ? EncodeText(p, tokenizer, add_special_tokens) : ParseTokenIds(p, tokenizer));
    prompts.push_back(std::move(ids));
  }
  return prompts;
}

}  // namespace

ApiResult<CompletionRequest> ParseCompletionRequest(const OrderedJson& ordered_body,
                                                    const ServerContext& context) {
  const json body = ordered_body;
  CompletionRequest request;
  TANDEM_API_ASSIGN_OR_RETURN(
      request.common,
      ParseGenerationRequest(body, Endpoint::kCompletions, context.config, &ordered_body));
  TANDEM_API_ASSIGN_OR_RETURN(
      bool ids_ok, CheckTokenIdsInVocabulary(request.common, context.tokenizer->vocab_size()));
  (void)ids_ok;
  TANDEM_API_ASSIGN_OR_RETURN(request.echo, GetBool(body, "echo", false));
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t logprobs, GetInt(body, "logprobs", -1));
  request.logprobs = -1;
  if (body.contains("logprobs") && !body["logprobs"].is_null()) {
    TANDEM_API_ASSIGN_OR_RETURN(request.logprobs,
                                CheckLogprobsCount("logprobs", logprobs, context.config));
  }
  request.common.sampling.logprobs = request.logprobs;
  // echo + logprobs: the logprobs cover the prompt too (its first token has none), so the
  // prompt's logprobs are computed with the same top-k (vLLM).
  if (request.echo && request.logprobs >= 0 && request.common.sampling.prompt_logprobs < 0) {
    request.common.sampling.prompt_logprobs = request.logprobs;
  }
  if (request.common.max_tokens_given && request.common.sampling.max_tokens == 0) {
    if (!request.echo) {
      return BadParam("max_tokens",
                      "'max_tokens' 0 is only allowed with 'echo' (the prompt "
                      "alone); otherwise it must be at least 1");
    }
    // The engine generates one token, which the response leaves out.
    request.prompt_only = true;
    request.common.sampling.max_tokens = 1;
    request.common.sampling.min_tokens = 0;
  }
  TANDEM_API_ASSIGN_OR_RETURN(
      request.prompts,
      ParsePrompts(body, context, request.common.add_special_tokens.value_or(true)));
  size_t longest = 0;
  for (std::vector<int32_t>& prompt : request.prompts) {
    TruncatePrompt(request.common, context.config.max_model_len, &prompt);
    longest = std::max(longest, prompt.size());
  }
  TANDEM_API_ASSIGN_OR_RETURN(bool tokens_ok,
                              ResolveTokenFields(&request.common, *context.tokenizer));
  (void)tokens_ok;
  WarnIgnoredFields(body, kCompletionKnownFields);
  TANDEM_API_ASSIGN_OR_RETURN(bool fits,
                              ResolveMaxTokens(&request.common, static_cast<int32_t>(longest),
                                               Endpoint::kCompletions, context.config));
  (void)fits;
  return request;
}

}  // namespace tandem::server::openai
