#include "server/openai/chat_completions_types.h"

#include <fmt/format.h>

#include <set>

#include "core/logging.h"
#include "server/openai/completions_types.h"
#include "server/openai/request_fields.h"
#include "server/openai/structured_outputs.h"

namespace tandem::server::openai {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// Top-level fields chat requests read (besides request_fields.h's); others are ignored and named
// in one warning (vLLM's default).
const std::set<std::string> kKnownFields = {
    "messages", "model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k",
    "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "seed", "n", "stop",
    "stop_token_ids", "ignore_eos", "min_tokens", "stream", "stream_options",
    "skip_special_tokens", "include_stop_str_in_output", "return_token_ids", "user", "logprobs",
    "top_logprobs", "add_generation_prompt", "continue_final_message", "chat_template_kwargs",
    "tools", "tool_choice", "logit_bias", "response_format", "parallel_tool_calls",
    "documents", "reasoning_effort", "chat_template", "include_reasoning",
    "structured_outputs", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
    "guided_decoding_backend", "guided_whitespace_pattern"};

}  // namespace

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(const OJson& body,
                                                            const ServerConfig& config) {
  ChatCompletionRequest request;
  const json plain = body;
  TANDEM_API_ASSIGN_OR_RETURN(request.common,
                              ParseGenerationRequest(plain, Endpoint::kChatCompletions, config,
                                                     &body));
  TANDEM_API_ASSIGN_OR_RETURN(request.input, ParseChatInput(body, config));
  const ToolChoice choice = request.input.tool_choice;
  if (choice == ToolChoice::kRequired || choice == ToolChoice::kNamed) {
    if (!request.common.sampling.structured_grammar.empty()) {
      return BadParam("tool_choice", "tool_choice \"required\" or a named function cannot be "
                                     "combined with response_format or structured outputs");
    }
    TANDEM_API_ASSIGN_OR_RETURN(
        request.common.sampling.structured_grammar,
        ForcedToolCallGrammar(request.input.tools, choice == ToolChoice::kRequired,
                              request.input.tool_choice_name,
                              request.input.parallel_tool_calls ? -1 : 1));
  }
  WarnIgnoredFields(plain, kKnownFields);
  TANDEM_API_ASSIGN_OR_RETURN(request.logprobs, GetBool(plain, "logprobs", false));
  const bool has_top = plain.contains("top_logprobs") && !plain["top_logprobs"].is_null();
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t top_logprobs, GetInt(plain, "top_logprobs", 0));
  if (has_top && (top_logprobs < 0 || top_logprobs > config.max_logprobs)) {
    return BadParam("top_logprobs", fmt::format("'top_logprobs' must be in [0, {}]; got {}",
                                                config.max_logprobs, top_logprobs));
  }
  if (has_top && top_logprobs > 0 && !request.logprobs) {
    return BadParam("top_logprobs", "'top_logprobs' requires 'logprobs' to be true");
  }
  request.top_logprobs = static_cast<int32_t>(top_logprobs);
  request.common.sampling.logprobs = request.logprobs ? request.top_logprobs : -1;
  return request;
}

OJson ChatTemplateContext(const ChatInput& input, const ServerConfig& config,
                          const text::Tokenizer& tokenizer) {
  OJson context = config.default_chat_template_kwargs.is_object()
                      ? config.default_chat_template_kwargs
                      : OJson::object();
  for (const auto& [key, value] : input.chat_template_kwargs.items()) context[key] = value;
  if (!input.documents.is_null()) context["documents"] = input.documents;
  if (!input.reasoning_effort.empty()) context["reasoning_effort"] = input.reasoning_effort;
  context["messages"] = input.messages;
  if (input.tools.is_array() && !input.tools.empty()) context["tools"] = input.tools;
  context["add_generation_prompt"] = input.add_generation_prompt;
  context["bos_token"] = tokenizer.bos_token();
  context["eos_token"] = tokenizer.eos_token();
  return context;
}

namespace {
json TokenEntry(const text::Tokenizer& tokenizer, const protocol::TokenLogprob& t,
               bool tokens_as_ids) {
  const std::string piece = LogprobTokenName(tokenizer, t.token_id, tokens_as_ids);
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(static_cast<int>(c));
  return {{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes}};
}
}  // namespace

json ChatLogprobsJson(const text::Tokenizer& tokenizer, const std::vector<int32_t>& token_ids,
                      const std::vector<protocol::PositionLogprobs>& logprobs,
                      bool tokens_as_ids) {
  json content = json::array();
  for (size_t i = 0; i < token_ids.size(); ++i) {
    protocol::TokenLogprob sampled{token_ids[i], 0.0f};
    if (i < logprobs.size()) sampled = logprobs[i].sampled;
    json entry = TokenEntry(tokenizer, sampled, tokens_as_ids);
    entry["top_logprobs"] = json::array();
    if (i < logprobs.size()) {
      for (const protocol::TokenLogprob& t : logprobs[i].top) {
        entry["top_logprobs"].push_back(TokenEntry(tokenizer, t, tokens_as_ids));
      }
    }
    content.push_back(std::move(entry));
  }
  return {{"content", content}};
}

}  // namespace tandem::server::openai
