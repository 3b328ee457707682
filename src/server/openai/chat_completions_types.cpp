// Parsing of a /v1/chat/completions body: the messages, tools and chat-template arguments
// (ParseChatInput), validated and normalized for the template the way vLLM does
// (entrypoints/chat_utils.py "string" content format: text parts joined with "\n"; assistant
// tool_calls arguments JSON text → object), then the whole request (ParseChatCompletionRequest).
// Reference: vLLM entrypoints/openai/protocol.py ChatCompletionRequest.check_tool_usage,
// check_generation_prompt, check_logprobs.
#include "server/openai/chat_completions_types.h"

#include <fmt/format.h>

#include <set>

#include "server/openai/request_fields.h"
#include "server/openai/request_parsing.h"
#include "server/openai/structured_outputs.h"

namespace tandem::server::openai {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// Top-level fields chat requests read: their own, those both endpoints read and request_fields.h's;
// others are ignored and named in one warning (vLLM's default).
const std::set<std::string> kChatKnownFields = WithGenerationFieldNames(
    {"messages", "max_completion_tokens", "top_logprobs", "add_generation_prompt",
     "continue_final_message", "chat_template_kwargs", "tools", "tool_choice",
     "parallel_tool_calls", "documents", "reasoning_effort", "chat_template", "include_reasoning"});

const std::set<std::string> kRoles = {"system",    "developer", "user",
                                      "assistant", "tool",      "function"};

// Content as one string: a string as is; text parts joined with "\n"; null → "".
ApiResult<std::string> ContentText(const OJson& content, size_t message_index) {
  if (content.is_null()) return std::string();
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    return BadParam("messages", fmt::format("messages[{}].content must be a string or an array "
                                            "of content parts; found {}",
                                            message_index, JsonTypeWithArticle(content)));
  }
  std::string text;
  for (size_t p = 0; p < content.size(); ++p) {
    const OJson& part = content[p];
    if (!part.is_object() || StringMember(part, "type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string()) {
      return BadParam("messages", fmt::format("messages[{}].content[{}]: only parts "
                                              "{{\"type\": \"text\", \"text\": string}} are "
                                              "supported",
                                              message_index, p));
    }
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

// Assistant tool_calls: an array of {"function": {"name", "arguments"}}; string arguments that
// parse as JSON become objects for the template (vLLM _postprocess_messages).
ApiResult<OJson> NormalizeToolCalls(const OJson& tool_calls, size_t index) {
  if (!tool_calls.is_array()) {
    return BadParam("messages", fmt::format("messages[{}].tool_calls must be an array; found {}",
                                            index, JsonTypeWithArticle(tool_calls)));
  }
  OJson out = OJson::array();
  for (size_t k = 0; k < tool_calls.size(); ++k) {
    OJson call = tool_calls[k];
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object() ||
        !call["function"].contains("name") || !call["function"]["name"].is_string()) {
      return BadParam("messages", fmt::format("messages[{}].tool_calls[{}] must be "
                                              "{{\"type\": \"function\", \"function\": {{\"name\","
                                              " \"arguments\"}}}}",
                                              index, k));
    }
    OJson& arguments = call["function"]["arguments"];
    if (arguments.is_string()) {
      OJson parsed = ParseOrderedOrDiscarded(arguments.get<std::string>());
      if (!parsed.is_discarded()) arguments = std::move(parsed);
    } else if (arguments.is_null()) {
      arguments = OJson::object();
    }
    out.push_back(std::move(call));
  }
  return out;
}

ApiResult<OJson> ParseMessages(const OJson& body, int32_t max_messages) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) return BadParam("messages", "'messages' is required");
  if (!it->is_array() || it->empty()) {
    return BadParam("messages", "'messages' must be a non-empty array of messages");
  }
  if (it->size() > static_cast<size_t>(max_messages)) {
    return BadParam("messages", fmt::format("'messages' holds {} messages, more than the limit "
                                            "of {} per request (--max-chat-messages)",
                                            it->size(), max_messages));
  }
  OJson messages = OJson::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const OJson& m = (*it)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return BadParam("messages", fmt::format("messages[{}] must be an object with a string "
                                              "'role'",
                                              i));
    }
    const std::string role = m["role"].get<std::string>();
    if (!kRoles.count(role)) {
      return BadParam("messages", fmt::format("messages[{}].role '{}' is unknown; expected one "
                                              "of system, developer, user, assistant, tool",
                                              i, role));
    }
    OJson message = m;  // keep extra keys (name, tool_call_id, reasoning_content, ...)
    // Current vLLM names an assistant message's reasoning `reasoning`; chat templates (Qwen's,
    // DeepSeek's) read `reasoning_content`.
    if (m.contains("reasoning") && m["reasoning"].is_string() &&
        (!m.contains("reasoning_content") || m["reasoning_content"].is_null())) {
      message["reasoning_content"] = m["reasoning"];
    }
    TANDEM_API_ASSIGN_OR_RETURN(message["content"],
                                ContentText(m.contains("content") ? m["content"] : OJson(), i));
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      TANDEM_API_ASSIGN_OR_RETURN(message["tool_calls"], NormalizeToolCalls(m["tool_calls"], i));
    }
    messages.push_back(std::move(message));
  }
  return messages;
}

ApiResult<OJson> ParseTools(const OJson& body, int32_t max_tools) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return OJson();
  if (!it->is_array()) return BadParam("tools", "'tools' must be an array of tools");
  if (it->size() > static_cast<size_t>(max_tools)) {
    return BadParam("tools", fmt::format("'tools' holds {} tools, more than the limit of {} per "
                                         "request (--max-chat-tools)",
                                         it->size(), max_tools));
  }
  for (size_t k = 0; k < it->size(); ++k) {
    const OJson& tool = (*it)[k];
    if (!tool.is_object() || StringMember(tool, "type", "function") != "function" ||
        !tool.contains("function") || !tool["function"].is_object() ||
        !tool["function"].contains("name") || !tool["function"]["name"].is_string()) {
      return BadParam("tools", fmt::format("tools[{}] must be {{\"type\": \"function\", "
                                           "\"function\": {{\"name\": string, ...}}}}",
                                           k));
    }
  }
  return *it;
}

// vLLM check_tool_usage: default "auto" with tools, "none" without.
ApiResult<bool> ParseToolChoice(const OJson& body, ChatInput* input) {
  const bool has_tools = input->tools.is_array() && !input->tools.empty();
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) {
    input->tool_choice = has_tools ? ToolChoice::kAuto : ToolChoice::kNone;
    return true;
  }
  if (it->is_string()) {
    const std::string value = it->get<std::string>();
    if (value == "none")
      input->tool_choice = ToolChoice::kNone;
    else if (value == "auto")
      input->tool_choice = ToolChoice::kAuto;
    else if (value == "required")
      input->tool_choice = ToolChoice::kRequired;
    else {
      return BadParam("tool_choice", fmt::format("Invalid value for `tool_choice`: {}! Only "
                                                 "named tools, \"none\", \"auto\" or \"required\" "
                                                 "are supported.",
                                                 value));
    }
  } else if (it->is_object() && it->contains("function") && (*it)["function"].is_object() &&
             (*it)["function"].contains("name") && (*it)["function"]["name"].is_string()) {
    input->tool_choice = ToolChoice::kNamed;
    input->tool_choice_name = (*it)["function"]["name"].get<std::string>();
  } else {
    return BadParam("tool_choice",
                    "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                    "{\"type\": \"function\", \"function\": {\"name\": string}}");
  }
  if (input->tool_choice != ToolChoice::kNone && !has_tools) {
    return BadParam("tool_choice", "When using `tool_choice`, `tools` must be set.");
  }
  if (input->tool_choice == ToolChoice::kNamed) {
    bool found = false;
    for (const OJson& tool : input->tools) {
      found |= tool["function"]["name"].get<std::string>() == input->tool_choice_name;
    }
    if (!found) {
      return BadParam("tool_choice", fmt::format("The tool specified in `tool_choice` ('{}') "
                                                 "does not match any of the specified `tools`",
                                                 input->tool_choice_name));
    }
  }
  return true;
}

ApiResult<bool> GetOrderedBool(const OJson& body, const char* field, bool fallback) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return BadParam(field, fmt::format("'{}' must be a boolean", field));
  return it->get<bool>();
}

// vLLM's chat extras: documents and reasoning_effort reach the template, chat_template
// replaces it (when the server trusts requests), include_reasoning drops the reasoning.
ApiResult<bool> ParseTemplateExtras(const OJson& body, ChatInput* input) {
  TANDEM_API_ASSIGN_OR_RETURN(input->include_reasoning,
                              GetOrderedBool(body, "include_reasoning", true));
  auto it = body.find("documents");
  if (it != body.end() && !it->is_null()) {
    if (!it->is_array()) return BadParam("documents", "'documents' must be an array of objects");
    for (const OJson& doc : *it) {
      if (!doc.is_object()) return BadParam("documents", "'documents' must be an array of objects");
    }
    input->documents = *it;
  }
  it = body.find("reasoning_effort");
  if (it != body.end() && !it->is_null()) {
    const bool ok = it->is_string() && (*it == "low" || *it == "medium" || *it == "high");
    if (!ok)
      return BadParam("reasoning_effort",
                      "'reasoning_effort' must be \"low\", \"medium\" or \"high\"");
    input->reasoning_effort = it->get<std::string>();
  }
  it = body.find("chat_template");
  if (it != body.end() && !it->is_null()) {
    if (!it->is_string()) return BadParam("chat_template", "'chat_template' must be a string");
    input->chat_template = it->get<std::string>();
  }
  return true;
}

}  // namespace

ApiResult<ChatInput> ParseChatInput(const OJson& body, const ServerConfig& config) {
  ChatInput input;
  TANDEM_API_ASSIGN_OR_RETURN(input.messages, ParseMessages(body, config.max_chat_messages));
  TANDEM_API_ASSIGN_OR_RETURN(input.tools, ParseTools(body, config.max_chat_tools));
  TANDEM_API_ASSIGN_OR_RETURN(bool unused, ParseToolChoice(body, &input));
  (void)unused;
  TANDEM_API_ASSIGN_OR_RETURN(input.parallel_tool_calls,
                              GetOrderedBool(body, "parallel_tool_calls", true));
  TANDEM_API_ASSIGN_OR_RETURN(input.continue_final_message,
                              GetOrderedBool(body, "continue_final_message", false));
  // vLLM: add_generation_prompt defaults to true; with continue_final_message it must be off.
  const bool default_agp = !input.continue_final_message;
  TANDEM_API_ASSIGN_OR_RETURN(input.add_generation_prompt,
                              GetOrderedBool(body, "add_generation_prompt", default_agp));
  if (input.add_generation_prompt && input.continue_final_message) {
    return BadParam("continue_final_message",
                    "Cannot set both `continue_final_message` and "
                    "`add_generation_prompt` to True.");
  }
  TANDEM_API_ASSIGN_OR_RETURN(bool extras_ok, ParseTemplateExtras(body, &input));
  (void)extras_ok;
  auto kwargs = body.find("chat_template_kwargs");
  if (kwargs != body.end() && !kwargs->is_null()) {
    if (!kwargs->is_object()) {
      return BadParam("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    }
    // These are the request's own fields, checked and bounded there (--max-chat-messages,
    // --max-chat-tools); passing them again as template variables would bypass that.
    for (const char* reserved : {"messages", "tools"}) {
      if (kwargs->contains(reserved)) {
        return BadParam("chat_template_kwargs",
                        fmt::format("'chat_template_kwargs' must not set '{}'; send it as the "
                                    "request's own '{}' field",
                                    reserved, reserved));
      }
    }
    input.chat_template_kwargs = *kwargs;
  }
  return input;
}

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(const OJson& body,
                                                            const ServerContext& context) {
  const ServerConfig& config = context.config;
  ChatCompletionRequest request;
  const json plain = body;
  TANDEM_API_ASSIGN_OR_RETURN(
      request.common, ParseGenerationRequest(plain, Endpoint::kChatCompletions, config, &body));
  TANDEM_API_ASSIGN_OR_RETURN(request.input, ParseChatInput(body, config));
  const ToolChoice choice = request.input.tool_choice;
  if (choice == ToolChoice::kRequired || choice == ToolChoice::kNamed) {
    if (!request.common.sampling.structured_grammar.empty()) {
      return BadParam("tool_choice",
                      "tool_choice \"required\" or a named function cannot be "
                      "combined with response_format or structured outputs");
    }
    TANDEM_API_ASSIGN_OR_RETURN(
        request.common.sampling.structured_grammar,
        ForcedToolCallGrammar(request.input.tools, choice == ToolChoice::kRequired,
                              request.input.tool_choice_name,
                              request.input.parallel_tool_calls ? -1 : 1));
  }
  WarnIgnoredFields(plain, kChatKnownFields);
  TANDEM_API_ASSIGN_OR_RETURN(request.logprobs, GetBool(plain, "logprobs", false));
  const bool has_top = plain.contains("top_logprobs") && !plain["top_logprobs"].is_null();
  TANDEM_API_ASSIGN_OR_RETURN(const int64_t top_logprobs, GetInt(plain, "top_logprobs", 0));
  int32_t top = 0;
  if (has_top) {
    TANDEM_API_ASSIGN_OR_RETURN(top, CheckLogprobsCount("top_logprobs", top_logprobs, config));
  }
  if (has_top && top != 0 && !request.logprobs) {
    return BadParam("top_logprobs", "'top_logprobs' requires 'logprobs' to be true");
  }
  request.common.sampling.logprobs = request.logprobs ? top : -1;
  TANDEM_API_ASSIGN_OR_RETURN(
      bool ok, CheckTokenIdsInVocabulary(request.common, context.tokenizer->vocab_size()));
  TANDEM_API_ASSIGN_OR_RETURN(ok, ResolveTokenFields(&request.common, *context.tokenizer));
  (void)ok;
  return request;
}

}  // namespace tandem::server::openai
