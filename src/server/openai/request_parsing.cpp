#include "server/openai/request_parsing.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>

#include "core/json_limits.h"
#include "server/openai/request_fields.h"
#include "server/openai/structured_outputs.h"
#include "text/bounded_json.h"

namespace tandem::server::openai {

using nlohmann::json;

namespace {

bool Absent(const json& body, const char* field) {
  auto it = body.find(field);
  return it == body.end() || it->is_null();
}

ApiError WrongType(const char* field, const char* expected, const json& found) {
  return BadParam(
      field, fmt::format("'{}' must be {}; found {}", field, expected, JsonTypeWithArticle(found)));
}

// Fills request->stop from a string or an array of strings.
ApiResult<bool> ParseStop(const json& body, GenerationRequest* request) {
  if (Absent(body, "stop")) {
    return true;
  }
  const json& stop = body["stop"];
  if (stop.is_string()) {
    request->stop.push_back(stop.get<std::string>());
  } else if (stop.is_array()) {
    for (const json& s : stop) {
      if (!s.is_string()) {
        return WrongType("stop", "a string or an array of strings", stop);
      }
      request->stop.push_back(s.get<std::string>());
    }
  } else {
    return WrongType("stop", "a string or an array of strings", stop);
  }
  for (const std::string& s : request->stop) {
    if (s.empty()) {
      return BadParam("stop", "'stop' strings must not be empty");
    }
  }
  return true;
}

// A token id as written (any integer, unsigned ones beyond int64 included) clamped into
// int32 range so that range checks see it as out of the vocabulary, never wrapped.
int32_t ClampedTokenId(const json& id) {
  if (id.is_number_unsigned()) {
    return static_cast<int32_t>(std::min<uint64_t>(id.get<uint64_t>(), INT32_MAX));
  }
  return static_cast<int32_t>(std::clamp<int64_t>(id.get<int64_t>(), INT32_MIN, INT32_MAX));
}

ApiResult<bool> ParseStopTokenIds(const json& body, protocol::SamplingParams* sampling) {
  if (Absent(body, "stop_token_ids")) {
    return true;
  }
  const json& ids = body["stop_token_ids"];
  if (!ids.is_array()) {
    return WrongType("stop_token_ids", "an array of integers", ids);
  }
  for (const json& id : ids) {
    if (!id.is_number_integer()) {
      return BadParam("stop_token_ids",
                      fmt::format("'stop_token_ids' must be an array of integers; found {} "
                                  "in it",
                                  JsonTypeWithArticle(id)));
    }
    sampling->stop_token_ids.push_back(ClampedTokenId(id));
  }
  return true;
}

// OpenAI logit_bias: {"<token id>": bias in [-100, 100], ...}.
ApiResult<bool> ParseLogitBias(const json& body, protocol::SamplingParams* sampling) {
  if (Absent(body, "logit_bias")) {
    return true;
  }
  const json& bias = body["logit_bias"];
  if (!bias.is_object()) {
    return WrongType("logit_bias", "an object mapping token ids to biases", bias);
  }
  for (const auto& [key, value] : bias.items()) {
    int64_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || key.empty()) {
      return BadParam("logit_bias", fmt::format("'logit_bias' keys must be token ids (integers "
                                                "as strings); found \"{}\"",
                                                key));
    }
    if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100)) {
      return BadParam("logit_bias", fmt::format("'logit_bias' values must be numbers in "
                                                "[-100, 100]; token {} has {}",
                                                key, value.dump()));
    }
    sampling->logit_bias_ids.push_back(
        static_cast<int32_t>(std::clamp<int64_t>(id, INT32_MIN, INT32_MAX)));
    sampling->logit_bias_values.push_back(value.get<float>());
  }
  return true;
}

// Model name: absent → the default served name; unknown → 404 like vLLM.
ApiResult<std::string> ParseModel(const json& body, const ServerConfig& config) {
  if (Absent(body, "model")) {
    return config.default_model_name();
  }
  if (!body["model"].is_string()) {
    return WrongType("model", "a string", body["model"]);
  }
  const std::string model = body["model"].get<std::string>();
  for (const std::string& name : config.served_model_names) {
    if (name == model) {
      return model;
    }
  }
  return ApiError{NotFound(fmt::format("The model `{}` does not exist.", model)), "model"};
}

}  // namespace

ApiResult<int32_t> CheckLogprobsCount(const char* field, int64_t k, const ServerConfig& config) {
  if (k == -1) {
    if (config.max_logprobs == -1) {
      return kAllLogprobs;
    }
    return BadParam(field, fmt::format("'{}': -1 asks for every token of the vocabulary, which "
                                       "needs --max-logprobs -1 (now {})",
                                       field, config.max_logprobs));
  }
  if (k < 0 || (config.max_logprobs != -1 && k > config.max_logprobs)) {
    return BadParam(field, config.max_logprobs == -1
                               ? fmt::format("'{}' must be -1 or >= 0; got {}", field, k)
                               : fmt::format("'{}' must be in [0, {}] (--max-logprobs); got {}",
                                             field, config.max_logprobs, k));
  }
  return static_cast<int32_t>(std::min<int64_t>(k, kAllLogprobs));
}

ApiResult<bool> GetBool(const json& body, const char* field, bool fallback) {
  if (Absent(body, field)) {
    return fallback;
  }
  if (!body[field].is_boolean()) {
    return WrongType(field, "a boolean", body[field]);
  }
  return body[field].get<bool>();
}

ApiResult<int64_t> GetInt(const json& body, const char* field, int64_t fallback) {
  if (Absent(body, field)) {
    return fallback;
  }
  const json& v = body[field];
  // JSON integers past int64 (up to 2^64 - 1) parse as unsigned: refuse them as written, never
  // wrapped into negative numbers.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return BadParam(
        field, fmt::format("'{}' must be at most {}; got {}", field, INT64_MAX, v.get<uint64_t>()));
  }
  if (v.is_number_integer()) {
    return v.get<int64_t>();
  }
  // pydantic accepts 5.0 for an int field; so do we.
  if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
      std::abs(v.get<double>()) < 9e15) {
    return static_cast<int64_t>(v.get<double>());
  }
  return WrongType(field, "an integer", v);
}

ApiResult<double> GetNumber(const json& body, const char* field, double fallback) {
  if (Absent(body, field)) {
    return fallback;
  }
  if (!body[field].is_number()) {
    return WrongType(field, "a number", body[field]);
  }
  return body[field].get<double>();
}

nlohmann::ordered_json ParseOrderedOrDiscarded(std::string_view text) {
  return text::ParseBoundedOrderedOrDiscarded(text);
}

namespace {

template <typename J>
std::string TypeWithArticle(const J& value) {
  const std::string name = value.type_name();
  if (value.is_null()) {
    return name;
  }
  const bool vowel = !name.empty() && std::string("aeiou").find(name[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + name;
}

}  // namespace

std::string JsonTypeWithArticle(const json& value) { return TypeWithArticle(value); }
std::string JsonTypeWithArticle(const OrderedJson& value) { return TypeWithArticle(value); }

std::optional<std::string> StringMember(const OrderedJson& object, const char* key,
                                        std::string_view absent) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return std::string(absent);
  }
  if (!it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

namespace {

// A request body as JSON of type J (json or ordered_json), nesting limited while parsing.
template <typename J>
ApiResult<J> ParseBody(std::string_view body) {
  if (body.empty()) {
    return BadParam("",
                    "request body is empty; send a JSON object with a Content-Length or "
                    "Transfer-Encoding: chunked header");
  }
  J parsed;
  text::BoundedJsonError error;
  if (!text::ParseBoundedJson(body, kMaxJsonDepth, &parsed, &error)) {
    if (error.too_deep) {
      return BadParam("", fmt::format("request body nests JSON arrays and objects deeper than "
                                      "the limit of {} levels",
                                      kMaxJsonDepth));
    }
    if (error.too_large) {
      return BadParam("", "request body has " + error.message);
    }
    return BadParam("", fmt::format("request body is not valid JSON: {}", error.message));
  }
  if (!parsed.is_object()) {
    return BadParam("", fmt::format("request body must be a JSON object; found {}",
                                    JsonTypeWithArticle(parsed)));
  }
  return parsed;
}

}  // namespace

ApiResult<OrderedJson> ParseOrderedJsonObject(std::string_view body) {
  return ParseBody<OrderedJson>(body);
}

std::set<std::string> WithGenerationFieldNames(std::initializer_list<const char*> endpoint_fields) {
  static constexpr const char* kShared[] = {"model",
                                            "max_tokens",
                                            "temperature",
                                            "top_p",
                                            "top_k",
                                            "min_p",
                                            "presence_penalty",
                                            "frequency_penalty",
                                            "repetition_penalty",
                                            "seed",
                                            "n",
                                            "stop",
                                            "stop_token_ids",
                                            "ignore_eos",
                                            "min_tokens",
                                            "stream",
                                            "stream_options",
                                            "skip_special_tokens",
                                            "include_stop_str_in_output",
                                            "return_token_ids",
                                            "user",
                                            "logprobs",
                                            "logit_bias",
                                            "response_format",
                                            "structured_outputs",
                                            "guided_json",
                                            "guided_regex",
                                            "guided_choice",
                                            "guided_grammar",
                                            "guided_decoding_backend",
                                            "guided_whitespace_pattern"};
  std::set<std::string> names(std::begin(kShared), std::end(kShared));
  names.insert(endpoint_fields.begin(), endpoint_fields.end());
  return names;
}

ApiResult<GenerationRequest> ParseGenerationRequest(const json& body, Endpoint endpoint,
                                                    const ServerConfig& config,
                                                    const OrderedJson* ordered_body) {
  GenerationRequest r;
  protocol::SamplingParams& s = r.sampling;
  TANDEM_API_ASSIGN_OR_RETURN(r.model, ParseModel(body, config));

  TANDEM_API_ASSIGN_OR_RETURN(const int64_t n, GetInt(body, "n", 1));
  if (n < 1 || n > 128) {
    return BadParam("n", fmt::format("'n' must be in [1, 128]; got {}", n));
  }
  r.n = static_cast<int32_t>(n);

  // max_completion_tokens (the newer OpenAI name) wins over max_tokens, as in vLLM chat.
  const char* max_field =
      !Absent(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  r.max_tokens_given = !Absent(body, max_field);
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t max_tokens, GetInt(body, max_field, 0));
  // 0 passes here for completions only, where it needs echo (vLLM: the prompt alone, e.g. for
  // its logprobs); ParseCompletionRequest checks that.
  const int64_t min_tokens_allowed = endpoint == Endpoint::kCompletions ? 0 : 1;
  if (r.max_tokens_given &&
      (max_tokens < min_tokens_allowed || max_tokens > config.max_model_len)) {
    return BadParam(max_field, fmt::format("'{}' must be in [1, {}] (max_model_len); got {}",
                                           max_field, config.max_model_len, max_tokens));
  }
  s.max_tokens = static_cast<int32_t>(max_tokens);

  TANDEM_API_ASSIGN_OR_RETURN(
      const double temperature,
      GetNumber(body, "temperature", config.default_temperature.value_or(1.0)));
  if (!(temperature >= 0) || temperature > 1e4) {
    return BadParam("temperature",
                    fmt::format("'temperature' must be in [0, 10000]; got {}", temperature));
  }
  s.temperature = static_cast<float>(temperature);
  TANDEM_API_ASSIGN_OR_RETURN(const double top_p,
                              GetNumber(body, "top_p", config.default_top_p.value_or(1.0)));
  if (!(top_p > 0 && top_p <= 1)) {
    return BadParam("top_p", fmt::format("'top_p' must be in (0, 1]; got {}", top_p));
  }
  s.top_p = static_cast<float>(top_p);
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t top_k,
                              GetInt(body, "top_k", config.default_top_k.value_or(0)));
  if (top_k < -1 || top_k > (1 << 30)) {
    return BadParam("top_k", fmt::format("'top_k' must be -1 or 0 (off) or >= 1; got {}", top_k));
  }
  s.top_k = static_cast<int32_t>(top_k);
  TANDEM_API_ASSIGN_OR_RETURN(const double min_p, GetNumber(body, "min_p", 0.0));
  if (!(min_p >= 0 && min_p <= 1)) {
    return BadParam("min_p", fmt::format("'min_p' must be in [0, 1]; got {}", min_p));
  }
  s.min_p = static_cast<float>(min_p);
  for (const char* field : {"presence_penalty", "frequency_penalty"}) {
    TANDEM_API_ASSIGN_OR_RETURN(const double penalty, GetNumber(body, field, 0.0));
    if (!(penalty >= -2 && penalty <= 2)) {
      return BadParam(field, fmt::format("'{}' must be in [-2, 2]; got {}", field, penalty));
    }
    (std::string_view(field) == "presence_penalty" ? s.presence_penalty : s.frequency_penalty) =
        static_cast<float>(penalty);
  }
  TANDEM_API_ASSIGN_OR_RETURN(
      const double repetition_penalty,
      GetNumber(body, "repetition_penalty", config.default_repetition_penalty.value_or(1.0)));
  if (!(repetition_penalty > 0) || repetition_penalty > 1e4) {
    return BadParam(
        "repetition_penalty",
        fmt::format("'repetition_penalty' must be in (0, 10000]; got {}", repetition_penalty));
  }
  s.repetition_penalty = static_cast<float>(repetition_penalty);

  if (!Absent(body, "seed")) {
    s.has_seed = true;
    if (body["seed"].is_number_unsigned()) {
      s.seed = body["seed"].get<uint64_t>();  // the whole 64-bit range (torch's seeds)
    } else {
      TANDEM_API_ASSIGN_OR_RETURN(const int64_t seed, GetInt(body, "seed", 0));
      s.seed = static_cast<uint64_t>(seed);
    }
  }
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t min_tokens, GetInt(body, "min_tokens", 0));
  if (min_tokens < 0 || (r.max_tokens_given && min_tokens > max_tokens)) {
    return BadParam("min_tokens",
                    fmt::format("'min_tokens' must be in [0, max_tokens]; got {}", min_tokens));
  }
  s.min_tokens = static_cast<int32_t>(min_tokens);
  TANDEM_API_ASSIGN_OR_RETURN(s.ignore_eos, GetBool(body, "ignore_eos", false));
  TANDEM_API_ASSIGN_OR_RETURN(r.stream, GetBool(body, "stream", false));
  TANDEM_API_ASSIGN_OR_RETURN(r.skip_special_tokens, GetBool(body, "skip_special_tokens", true));
  TANDEM_API_ASSIGN_OR_RETURN(r.include_stop_str_in_output,
                              GetBool(body, "include_stop_str_in_output", false));
  TANDEM_API_ASSIGN_OR_RETURN(r.return_token_ids, GetBool(body, "return_token_ids", false));
  if (!Absent(body, "stream_options")) {
    const json& options = body["stream_options"];
    if (!options.is_object()) {
      return WrongType("stream_options", "an object", options);
    }
    if (!r.stream) {
      return BadParam("stream_options", "'stream_options' is only allowed when 'stream' is true");
    }
    auto include_usage = GetBool(options, "include_usage", false);
    if (!include_usage.ok()) {
      return BadParam("stream_options", include_usage.error().status.message());
    }
    r.include_usage = include_usage.value();
  }
  TANDEM_API_ASSIGN_OR_RETURN(bool stop_ok, ParseStop(body, &r));
  TANDEM_API_ASSIGN_OR_RETURN(stop_ok, ParseStopTokenIds(body, &s));
  TANDEM_API_ASSIGN_OR_RETURN(stop_ok, ParseLogitBias(body, &s));
  TANDEM_API_ASSIGN_OR_RETURN(
      s.structured_grammar,
      ParseStructuredOutputs(ordered_body != nullptr ? *ordered_body : OrderedJson(body)));
  TANDEM_API_ASSIGN_OR_RETURN(stop_ok, ParseRequestFields(body, config, &r));
  (void)stop_ok;
  return r;
}

ApiResult<bool> ResolveMaxTokens(GenerationRequest* request, int32_t num_prompt_tokens,
                                 Endpoint endpoint, const ServerConfig& config) {
  const char* prompt_param = endpoint == Endpoint::kChatCompletions ? "messages" : "prompt";
  if (num_prompt_tokens >= config.max_model_len) {
    return BadParam(prompt_param,
                    fmt::format("This model's maximum context length is {} tokens. However, your "
                                "request has {} input tokens. Please reduce the length of the "
                                "input messages.",
                                config.max_model_len, num_prompt_tokens));
  }
  if (!request->max_tokens_given) {
    request->sampling.max_tokens = endpoint == Endpoint::kChatCompletions
                                       ? config.max_model_len - num_prompt_tokens
                                       : std::min(16, config.max_model_len - num_prompt_tokens);
  }
  const int32_t max_tokens = request->sampling.max_tokens;
  if (num_prompt_tokens + max_tokens > config.max_model_len) {
    return BadParam("max_tokens",
                    fmt::format("This model's maximum context length is {} tokens. However, you "
                                "requested {} tokens ({} in the messages, {} in the completion). "
                                "Please reduce the length of the messages or completion.",
                                config.max_model_len, num_prompt_tokens + max_tokens,
                                num_prompt_tokens, max_tokens));
  }
  if (request->sampling.min_tokens > max_tokens) {
    return BadParam("min_tokens", fmt::format("'min_tokens' ({}) must not exceed max_tokens ({})",
                                              request->sampling.min_tokens, max_tokens));
  }
  return true;
}

ApiResult<int32_t> ParseDataParallelRankHeader(const std::string& value) {
  if (value.empty()) {
    return -1;
  }
  int32_t rank = 0;
  for (char c : value) {
    if (c < '0' || c > '9' || rank > 1000000) {
      return ApiError{InvalidArgument("X-data-parallel-rank must be a non-negative integer, got '" +
                                      value + "'"),
                      ""};
    }
    rank = rank * 10 + (c - '0');
  }
  return rank;
}

namespace {

// An id as parsed: values beyond int32 were clamped to its ends, so say so rather than print
// the clamped number.
std::string DescribeTokenId(int32_t id) {
  if (id == INT32_MAX) {
    return "an id beyond 2147483646";
  }
  if (id == INT32_MIN) {
    return "an id below -2147483647";
  }
  return std::to_string(id);
}

}  // namespace

ApiResult<bool> CheckTokenIdsInVocabulary(const GenerationRequest& request, int32_t vocab_size) {
  for (int32_t id : request.sampling.stop_token_ids) {
    if (id < 0 || id >= vocab_size) {
      return BadParam("stop_token_ids", fmt::format("'stop_token_ids' holds {}, outside the "
                                                    "vocabulary [0, {})",
                                                    DescribeTokenId(id), vocab_size));
    }
  }
  for (int32_t id : request.sampling.logit_bias_ids) {
    if (id < 0 || id >= vocab_size) {
      return BadParam("logit_bias", fmt::format("'logit_bias' names token {}, outside the "
                                                "vocabulary [0, {})",
                                                DescribeTokenId(id), vocab_size));
    }
  }
  return true;
}

}  // namespace tandem::server::openai
