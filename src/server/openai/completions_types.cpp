#include "server/openai/completions_types.h"

#include "server/openai/request_parsing.h"

#include <fmt/format.h>

namespace tandem::server::openai {

using nlohmann::json;

namespace {

ApiResult<std::vector<int32_t>> ParsePrompt(const json& body, const ServerContext& context) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) return BadParam("prompt", "'prompt' is required");
  const json& prompt = *it;
  const text::Tokenizer& tokenizer = *context.tokenizer;
  if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) {
    return ParsePrompt(json{{"prompt", prompt[0]}}, context);
  }
  if (prompt.is_string()) {
    const std::string text = prompt.get<std::string>();
    if (text.empty()) return BadParam("prompt", "'prompt' must not be empty");
    return tokenizer.Encode(text, /*add_special_tokens=*/true);
  }
  if (!prompt.is_array()) {
    return BadParam("prompt", fmt::format("'prompt' must be a string, an array of token ids or "
                                          "an array of one string; found {}", JsonTypeWithArticle(prompt)));
  }
  if (prompt.empty()) return BadParam("prompt", "'prompt' must not be empty");
  std::vector<int32_t> ids;
  for (const json& id : prompt) {
    if (id.is_string() || id.is_array()) {
      return BadParam("prompt", "batched prompts (more than one prompt per request) are not "
                                "supported; send one request per prompt");
    }
    if (!id.is_number_integer()) {
      return BadParam("prompt", fmt::format("'prompt' token ids must be integers; found {}",
                                            JsonTypeWithArticle(id)));
    }
    const int64_t value = id.get<int64_t>();
    if (value < 0 || value >= tokenizer.vocab_size()) {
      return BadParam("prompt", fmt::format("token id {} in 'prompt' is out of vocabulary "
                                            "[0, {})", value, tokenizer.vocab_size()));
    }
    ids.push_back(static_cast<int32_t>(value));
  }
  return ids;
}

}  // namespace

ApiResult<CompletionRequest> ParseCompletionRequest(const json& body,
                                                    const ServerContext& context) {
  CompletionRequest request;
  TANDEM_API_ASSIGN_OR_RETURN(request.common,
                              ParseGenerationRequest(body, Endpoint::kCompletions, context.config));
  TANDEM_API_ASSIGN_OR_RETURN(
      bool ids_ok, CheckTokenIdsInVocabulary(request.common, context.tokenizer->vocab_size()));
  (void)ids_ok;
  TANDEM_API_ASSIGN_OR_RETURN(request.echo, GetBool(body, "echo", false));
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t logprobs, GetInt(body, "logprobs", -1));
  if (body.contains("logprobs") && !body["logprobs"].is_null() &&
      (logprobs < 0 || logprobs > context.config.max_logprobs)) {
    return BadParam("logprobs", fmt::format("'logprobs' must be in [0, {}]; got {}",
                                            context.config.max_logprobs, logprobs));
  }
  request.logprobs = static_cast<int32_t>(logprobs);
  request.common.sampling.logprobs = request.logprobs;
  if (request.echo && request.logprobs >= 0) {
    return BadParam("echo", "'echo' together with 'logprobs' (prompt logprobs) is not supported");
  }
  TANDEM_API_ASSIGN_OR_RETURN(request.prompt_token_ids, ParsePrompt(body, context));
  TANDEM_API_ASSIGN_OR_RETURN(
      bool fits, ResolveMaxTokens(&request.common, static_cast<int32_t>(request.prompt_token_ids.size()),
                                  Endpoint::kCompletions, context.config));
  (void)fits;
  return request;
}

json UsageJson(const GenerationUsage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
}

json CompletionLogprobsJson(const text::Tokenizer& tokenizer, const std::vector<int32_t>& token_ids,
                            const std::vector<protocol::PositionLogprobs>& logprobs,
                            int32_t text_offset_start) {
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(),
       offsets = json::array();
  int32_t offset = text_offset_start;
  for (size_t i = 0; i < token_ids.size(); ++i) {
    const std::string piece = tokenizer.TokenBytes(token_ids[i]);
    tokens.push_back(piece);
    offsets.push_back(offset);
    offset += static_cast<int32_t>(piece.size());
    if (i < logprobs.size()) {
      token_logprobs.push_back(logprobs[i].sampled.logprob);
      json alternatives = json::object();
      for (const protocol::TokenLogprob& t : logprobs[i].top) {
        alternatives[tokenizer.TokenBytes(t.token_id)] = t.logprob;
      }
      top.push_back(std::move(alternatives));
    } else {
      token_logprobs.push_back(nullptr);
      top.push_back(nullptr);
    }
  }
  return {{"text_offset", offsets}, {"token_logprobs", token_logprobs}, {"tokens", tokens},
          {"top_logprobs", top}};
}

}  // namespace tandem::server::openai
