#include "server/openai/request_fields.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/logging.h"
#include "server/request_id.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

bool Given(const json& body, const char* field) {
  auto it = body.find(field);
  return it != body.end() && !it->is_null();
}

ApiError WrongFieldType(const char* field, const char* expected, const json& found) {
  return BadParam(
      field, fmt::format("'{}' must be {}; found {}", field, expected, JsonTypeWithArticle(found)));
}

// Fields vLLM refuses, or that tandem has not built: a 400 naming them.
ApiResult<bool> RefuseUnbuilt(const json& body, int32_t n) {
  if (Given(body, "suffix")) {
    return BadParam("suffix", "'suffix' is not currently supported");  // vLLM's words
  }
  if (Given(body, "best_of")) {
    TANDEM_API_ASSIGN_OR_RETURN(const int64_t best_of, GetInt(body, "best_of", 1));
    if (best_of != 1 && best_of != n) {
      return BadParam("best_of", fmt::format("'best_of' {} is not supported (vLLM V1 does not "
                                             "support it either); leave it out",
                                             best_of));
    }
  }
  TANDEM_API_ASSIGN_OR_RETURN(const bool beam, GetBool(body, "use_beam_search", false));
  if (beam) return BadParam("use_beam_search", "beam search is not supported by tandem");
  return true;
}

ApiResult<bool> ParseTokenList(const json& body, const char* field, std::vector<int32_t>* out) {
  if (!Given(body, field)) return true;
  const json& ids = body[field];
  if (!ids.is_array()) {
    return WrongFieldType(field, "a non-empty array of token ids", ids);
  }
  if (ids.empty()) {
    return BadParam(field, fmt::format("'{}' must be a non-empty array of token ids; found an "
                                       "empty array",
                                       field));
  }
  for (const json& id : ids) {
    if (!id.is_number_integer()) {
      return WrongFieldType(field, "an array of integers", id);
    }
    // dump(): the id as written (one past int64 is unsigned in JSON; never shown wrapped).
    if ((id.is_number_unsigned() && id.get<uint64_t>() > INT32_MAX) || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > INT32_MAX) {
      return BadParam(field, fmt::format("token id {} in '{}' is out of range", id.dump(), field));
    }
    out->push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return true;
}

ApiResult<bool> ParseStrings(const json& body, const char* field, std::vector<std::string>* out) {
  if (!Given(body, field)) return true;
  const json& list = body[field];
  if (!list.is_array()) {
    return WrongFieldType(field, "an array of strings", list);
  }
  for (const json& s : list) {
    if (!s.is_string()) {
      return WrongFieldType(field, "an array of strings", s);
    }
    out->push_back(s.get<std::string>());
  }
  return true;
}

ApiResult<bool> ParseStringField(const json& body, const char* field, std::string* out) {
  if (!Given(body, field)) return true;
  if (!body[field].is_string()) {
    return WrongFieldType(field, "a string", body[field]);
  }
  *out = body[field].get<std::string>();
  return true;
}

}  // namespace

const std::set<std::string>& RequestFieldNames() {
  static const std::set<std::string> kNames = {"suffix",
                                               "best_of",
                                               "use_beam_search",
                                               "prompt_logprobs",
                                               "priority",
                                               "request_id",
                                               "allowed_token_ids",
                                               "bad_words",
                                               "truncate_prompt_tokens",
                                               "add_special_tokens",
                                               "spaces_between_special_tokens",
                                               "return_tokens_as_token_ids",
                                               "cache_salt"};
  return kNames;
}

ApiResult<bool> ParseRequestFields(const json& body, const ServerConfig& config,
                                   GenerationRequest* request) {
  TANDEM_API_ASSIGN_OR_RETURN(bool ok, RefuseUnbuilt(body, request->n));
  TANDEM_API_ASSIGN_OR_RETURN(ok, ParseStringField(body, "request_id", &request->request_id));
  if (auto error = CheckRequestId(request->request_id, "request_id")) {
    return BadParam("request_id", *error);
  }
  TANDEM_API_ASSIGN_OR_RETURN(request->priority, GetInt(body, "priority", 0));
  if (request->priority != 0 && !config.priority_scheduling) {  // vLLM's words, then ours
    return BadParam("priority", fmt::format("Got priority {} but Priority scheduling is not "
                                            "enabled (start the server with "
                                            "--scheduling-policy priority)",
                                            request->priority));
  }
  if (Given(body, "prompt_logprobs")) {
    TANDEM_API_ASSIGN_OR_RETURN(const int64_t k, GetInt(body, "prompt_logprobs", -1));
    TANDEM_API_ASSIGN_OR_RETURN(const int32_t count,
                                CheckLogprobsCount("prompt_logprobs", k, config));
    if (request->stream) {  // vLLM's words
      return BadParam("prompt_logprobs", "`prompt_logprobs` are not available when `stream=True`.");
    }
    request->sampling.prompt_logprobs = count;
  }
  TANDEM_API_ASSIGN_OR_RETURN(ok, ParseStringField(body, "cache_salt", &request->cache_salt));
  if (Given(body, "cache_salt") && request->cache_salt.empty()) {
    return BadParam("cache_salt", "'cache_salt' must be a non-empty string");
  }
  TANDEM_API_ASSIGN_OR_RETURN(
      ok, ParseTokenList(body, "allowed_token_ids", &request->sampling.allowed_token_ids));
  TANDEM_API_ASSIGN_OR_RETURN(ok, ParseStrings(body, "bad_words", &request->bad_words));
  if (Given(body, "add_special_tokens")) {
    TANDEM_API_ASSIGN_OR_RETURN(const bool add, GetBool(body, "add_special_tokens", true));
    request->add_special_tokens = add;
  }
  TANDEM_API_ASSIGN_OR_RETURN(const bool spaces,
                              GetBool(body, "spaces_between_special_tokens", true));
  (void)spaces;  // tandem's detokenizer never inserts spaces between special tokens (vLLM's
                 // fast-tokenizer path ignores the field as well): documented in docs/api.md
  TANDEM_API_ASSIGN_OR_RETURN(request->return_tokens_as_token_ids,
                              GetBool(body, "return_tokens_as_token_ids", false));
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t truncate, GetInt(body, "truncate_prompt_tokens", 0));
  if (Given(body, "truncate_prompt_tokens") &&
      (truncate < -1 || truncate == 0 || truncate > config.max_model_len)) {
    return BadParam("truncate_prompt_tokens",
                    fmt::format("'truncate_prompt_tokens' must be -1 or in [1, {}] "
                                "(max_model_len); got {}",
                                config.max_model_len, truncate));
  }
  request->truncate_prompt_tokens = static_cast<int32_t>(truncate);
  if (Given(body, "stream_options") && body["stream_options"].is_object()) {
    auto continuous = GetBool(body["stream_options"], "continuous_usage_stats", false);
    if (!continuous.ok()) {
      return BadParam("stream_options", continuous.error().status.message());
    }
    request->continuous_usage_stats = continuous.value();
  }
  (void)ok;
  return true;
}

ApiResult<bool> ResolveTokenFields(GenerationRequest* request, const text::Tokenizer& tokenizer) {
  for (int32_t id : request->sampling.allowed_token_ids) {
    if (id >= tokenizer.vocab_size()) {
      return BadParam("allowed_token_ids",
                      fmt::format("'allowed_token_ids' names token {}, outside the vocabulary "
                                  "[0, {})",
                                  id, tokenizer.vocab_size()));
    }
  }
  auto& out = request->sampling.bad_words_token_ids;
  for (const std::string& word : request->bad_words) {
    const std::string stripped(word.substr(std::min(word.size(), word.find_first_not_of(' '))));
    for (const std::string& text : {stripped, " " + stripped}) {
      std::vector<int32_t> ids = tokenizer.Encode(text, /*add_special_tokens=*/false);
      if (!ids.empty() && std::find(out.begin(), out.end(), ids) == out.end()) {
        out.push_back(std::move(ids));
      }
    }
  }
  return true;
}

void TruncatePrompt(const GenerationRequest& request, int32_t max_model_len,
                    std::vector<int32_t>* prompt_token_ids) {
  if (request.truncate_prompt_tokens == 0) return;
  const size_t keep = static_cast<size_t>(
      request.truncate_prompt_tokens < 0 ? max_model_len : request.truncate_prompt_tokens);
  if (prompt_token_ids->size() > keep) {
    prompt_token_ids->erase(prompt_token_ids->begin(),
                            prompt_token_ids->end() - static_cast<std::ptrdiff_t>(keep));
  }
}

void WarnIgnoredFields(const json& body, const std::set<std::string>& known) {
  std::string ignored;
  for (const auto& [key, unused] : body.items()) {
    if (!known.count(key) && !RequestFieldNames().count(key)) {
      ignored += (ignored.empty() ? "'" : ", '") + key + "'";
    }
  }
  if (!ignored.empty()) {
    TLOG_WARN("The following fields were present in the request but ignored: {}", ignored);
  }
}

}  // namespace tandem::server::openai
