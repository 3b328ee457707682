// ParseResponsesInput: the `input` of a Responses request → chat messages (responses_types.h).
// Reference: OpenAI API reference, Responses "input" (EasyInputMessage, ResponseInputItem);
// vLLM responses_utils.py construct_chat_message_with_tool_call.
#include <fmt/format.h>

#include <set>

#include "server/openai/request_parsing.h"
#include "server/openai/responses_types.h"

namespace tandem::server::openai {

using OJson = nlohmann::ordered_json;

namespace {

const std::set<std::string> kRoles = {"user", "system", "developer", "assistant"};

ApiError BadItem(size_t index, const std::string& what) {
  return BadParam("input", fmt::format("input[{}]: {}", index, what));
}

// A string field of an item; 400 when absent or not a string.
ApiResult<std::string> ItemString(const OJson& item, const char* field, size_t index) {
  auto it = item.find(field);
  if (it == item.end() || !it->is_string()) {
    return BadItem(index, fmt::format("'{}' must be a string; found {}", field,
                                      it == item.end() ? "none" : JsonTypeWithArticle(*it)));
  }
  return it->get<std::string>();
}

// Message content: a string, or text parts (input_text, output_text; "text" as chat's) joined
// with "\n".
ApiResult<std::string> ContentText(const OJson& content, size_t index) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    return BadItem(index, fmt::format("'content' must be a string or an array of content parts; "
                                      "found {}",
                                      JsonTypeWithArticle(content)));
  }
  std::string text;
  for (size_t p = 0; p < content.size(); ++p) {
    const OJson& part = content[p];
    const std::string type = part.is_object() ? StringMember(part, "type", "").value_or("") : "";
    if ((type != "input_text" && type != "output_text" && type != "text") ||
        !part.contains("text") || !part["text"].is_string()) {
      return BadItem(index, fmt::format("content[{}]: only text parts ({{\"type\": \"input_text\" "
                                        "or \"output_text\", \"text\": string}}) are supported; "
                                        "found type '{}'",
                                        p, type));
    }
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

ApiResult<OJson> Message(const OJson& item, size_t index) {
  TANDEM_API_ASSIGN_OR_RETURN(const std::string role, ItemString(item, "role", index));
  if (!kRoles.count(role)) {
    return BadItem(index, fmt::format("role '{}' is unknown; expected user, system, developer or "
                                      "assistant",
                                      role));
  }
  auto content = item.find("content");
  if (content == item.end()) return BadItem(index, "'content' is required");
  TANDEM_API_ASSIGN_OR_RETURN(const std::string text, ContentText(*content, index));
  return OJson{{"role", role}, {"content", text}};
}

ApiResult<OJson> FunctionCall(const OJson& item, size_t index) {
  TANDEM_API_ASSIGN_OR_RETURN(const std::string call_id, ItemString(item, "call_id", index));
  TANDEM_API_ASSIGN_OR_RETURN(const std::string name, ItemString(item, "name", index));
  TANDEM_API_ASSIGN_OR_RETURN(const std::string arguments, ItemString(item, "arguments", index));
  return OJson{{"id", call_id},
               {"type", "function"},
               {"function", {{"name", name}, {"arguments", arguments}}}};
}

ApiResult<OJson> FunctionCallOutput(const OJson& item, size_t index) {
  TANDEM_API_ASSIGN_OR_RETURN(const std::string call_id, ItemString(item, "call_id", index));
  auto output = item.find("output");
  if (output == item.end()) return BadItem(index, "'output' is required");
  TANDEM_API_ASSIGN_OR_RETURN(const std::string text, ContentText(*output, index));
  return OJson{{"role", "tool"}, {"tool_call_id", call_id}, {"content", text}};
}

// Appends `call` to the assistant message at the end of `messages`, or to a new one.
void AppendToolCall(OJson call, OJson* messages) {
  if (messages->empty() || StringMember(messages->back(), "role", "") != "assistant") {
    messages->push_back({{"role", "assistant"}, {"content", ""}});
  }
  OJson& message = messages->back();
  if (!message.contains("tool_calls")) message["tool_calls"] = OJson::array();
  message["tool_calls"].push_back(std::move(call));
}

}  // namespace

ApiResult<OJson> ParseResponsesInput(const OJson& input) {
  if (input.is_string()) return OJson::array({{{"role", "user"}, {"content", input}}});
  if (!input.is_array()) {
    return BadParam("input", fmt::format("'input' must be a string or an array of input items; "
                                         "found {}",
                                         JsonTypeWithArticle(input)));
  }
  OJson messages = OJson::array();
  for (size_t i = 0; i < input.size(); ++i) {
    const OJson& item = input[i];
    if (!item.is_object()) {
      return BadItem(
          i, fmt::format("an input item must be an object; found {}", JsonTypeWithArticle(item)));
    }
    const std::string type = item.contains("type") && item["type"].is_string()
                                 ? item["type"].get<std::string>()
                                 : (item.contains("role") ? "message" : "");
    if (type == "message") {
      TANDEM_API_ASSIGN_OR_RETURN(OJson message, Message(item, i));
      messages.push_back(std::move(message));
    } else if (type == "function_call") {
      TANDEM_API_ASSIGN_OR_RETURN(OJson call, FunctionCall(item, i));
      AppendToolCall(std::move(call), &messages);
    } else if (type == "function_call_output") {
      TANDEM_API_ASSIGN_OR_RETURN(OJson message, FunctionCallOutput(item, i));
      messages.push_back(std::move(message));
    } else if (type != "reasoning") {  // earlier reasoning is not shown to the model (vLLM)
      return BadItem(i, fmt::format("input items of type '{}' are not supported; expected "
                                    "message, function_call, function_call_output or reasoning",
                                    type));
    }
  }
  return messages;
}

}  // namespace tandem::server::openai
