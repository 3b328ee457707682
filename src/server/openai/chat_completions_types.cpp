#include "server/openai/chat_completions_types.h"

#include <fmt/format.h>

namespace tandem::server::openai {

using nlohmann::json;

namespace {

// Content as one string: a string as is; an array of {"type":"text","text"} parts joined with
// "\n" (vLLM's "string" content format); null → "".
ApiResult<std::string> ContentText(const json& content, size_t message_index) {
  const std::string param = "messages";
  if (content.is_null()) return std::string();
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    return BadParam(param, fmt::format("messages[{}].content must be a string or an array of "
                                       "content parts; found a {}", message_index,
                                       content.type_name()));
  }
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string()) {
      return BadParam(param, fmt::format("messages[{}].content: only parts of type 'text' with "
                                         "a string 'text' are supported", message_index));
    }
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

ApiResult<json> ParseMessages(const json& body) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) return BadParam("messages", "'messages' is required");
  if (!it->is_array() || it->empty()) {
    return BadParam("messages", "'messages' must be a non-empty array of messages");
  }
  json messages = json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return BadParam("messages", fmt::format("messages[{}] must be an object with a string "
                                              "'role'", i));
    }
    json message = m;  // keep extra keys (name, tool_calls, ...) for the template
    TANDEM_API_ASSIGN_OR_RETURN(message["content"],
                                ContentText(m.contains("content") ? m["content"] : json(), i));
    messages.push_back(std::move(message));
  }
  return messages;
}

}  // namespace

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(const json& body,
                                                            const ServerConfig& config) {
  ChatCompletionRequest request;
  TANDEM_API_ASSIGN_OR_RETURN(request.common,
                              ParseGenerationRequest(body, Endpoint::kChatCompletions, config));
  TANDEM_API_ASSIGN_OR_RETURN(request.messages, ParseMessages(body));
  TANDEM_API_ASSIGN_OR_RETURN(request.add_generation_prompt,
                              GetBool(body, "add_generation_prompt", true));
  if (body.contains("chat_template_kwargs") && !body["chat_template_kwargs"].is_null()) {
    if (!body["chat_template_kwargs"].is_object()) {
      return BadParam("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    }
    request.chat_template_kwargs = body["chat_template_kwargs"];
  }
  TANDEM_API_ASSIGN_OR_RETURN(request.logprobs, GetBool(body, "logprobs", false));
  const bool has_top = body.contains("top_logprobs") && !body["top_logprobs"].is_null();
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t top_logprobs, GetInt(body, "top_logprobs", 0));
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

json ChatTemplateContext(const ChatCompletionRequest& request, const text::Tokenizer& tokenizer) {
  json context = request.chat_template_kwargs;
  context["messages"] = request.messages;
  context["add_generation_prompt"] = request.add_generation_prompt;
  context["bos_token"] = tokenizer.bos_token();
  context["eos_token"] = tokenizer.eos_token();
  return context;
}

namespace {
json TokenEntry(const text::Tokenizer& tokenizer, const protocol::TokenLogprob& t) {
  const std::string piece = tokenizer.TokenBytes(t.token_id);
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(static_cast<int>(c));
  return {{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes}};
}
}  // namespace

json ChatLogprobsJson(const text::Tokenizer& tokenizer, const std::vector<int32_t>& token_ids,
                      const std::vector<protocol::PositionLogprobs>& logprobs) {
  json content = json::array();
  for (size_t i = 0; i < token_ids.size(); ++i) {
    protocol::TokenLogprob sampled{token_ids[i], 0.0f};
    if (i < logprobs.size()) sampled = logprobs[i].sampled;
    json entry = TokenEntry(tokenizer, sampled);
    entry["top_logprobs"] = json::array();
    if (i < logprobs.size()) {
      for (const protocol::TokenLogprob& t : logprobs[i].top) {
        entry["top_logprobs"].push_back(TokenEntry(tokenizer, t));
      }
    }
    content.push_back(std::move(entry));
  }
  return {{"content", content}};
}

}  // namespace tandem::server::openai
