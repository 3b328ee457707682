#include "server/anthropic/message_content.h"

#include <fmt/format.h>

#include <string>

#include "server/openai/request_parsing.h"

namespace tandem::server::anthropic {

using OJson = nlohmann::ordered_json;
using openai::JsonTypeWithArticle;

namespace {

// obj[key] when it is a string, else "" (never throws on a wrong type).
std::string StringField(const OJson& obj, const char* key) {
  auto it = obj.is_object() ? obj.find(key) : obj.end();
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// The blocks and tool results of one message, on their way to chat messages.
struct MessageParts {
  OJson text_parts = OJson::array();  // [{"type": "text", "text"}]
  OJson tool_calls = OJson::array();  // OpenAI tool_calls, arguments as objects
  std::string reasoning;              // thinking blocks, joined
  bool has_reasoning = false;
  OJson tool_messages = OJson::array();  // tool_result blocks as "tool" messages
};

// A tool_result's content: a string, or text blocks joined with "\n".
ApiResult<std::string> ToolResultText(const OJson& content, const std::string& where) {
  if (content.is_null()) return std::string();
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    return BadParam("messages", fmt::format("{}.content must be a string or an array of text "
                                            "blocks; found {}",
                                            where, JsonTypeWithArticle(content)));
  }
  std::string text;
  for (size_t k = 0; k < content.size(); ++k) {
    const OJson& item = content[k];
    const std::string type = StringField(item, "type");
    if (type != "text" || !item.contains("text") || !item["text"].is_string()) {
      return BadParam("messages", fmt::format("{}.content[{}]: only {{\"type\": \"text\", "
                                              "\"text\": string}} blocks are supported in a tool "
                                              "result; found type '{}'",
                                              where, k, type));
    }
    if (!text.empty()) text += "\n";
    text += item["text"].get<std::string>();
  }
  return text;
}

ApiResult<bool> ConvertToolUse(const OJson& block, const std::string& where, MessageParts* parts) {
  if (!block.contains("name") || !block["name"].is_string()) {
    return BadParam("messages", where + ": a tool_use block needs a string 'name'");
  }
  const OJson input = FieldAbsent(block, "input") ? OJson::object() : block["input"];
  if (!input.is_object()) {
    return BadParam("messages", fmt::format("{}.input must be an object; found {}", where,
                                            JsonTypeWithArticle(input)));
  }
  const std::string id =
      block.contains("id") && block["id"].is_string() ? block["id"].get<std::string>() : "";
  parts->tool_calls.push_back({{"id", id},
                               {"type", "function"},
                               {"function", {{"name", block["name"]}, {"arguments", input}}}});
  return true;
}

ApiResult<bool> ConvertToolResult(const OJson& block, const std::string& where,
                                  MessageParts* parts) {
  if (!block.contains("tool_use_id") || !block["tool_use_id"].is_string()) {
    return BadParam("messages", where + ": a tool_result block needs a string 'tool_use_id'");
  }
  if (!FieldAbsent(block, "is_error") && !block["is_error"].is_boolean()) {
    return BadParam("messages", where + ".is_error must be a boolean");
  }
  TANDEM_API_ASSIGN_OR_RETURN(
      std::string text,
      ToolResultText(block.contains("content") ? block["content"] : OJson(), where));
  parts->tool_messages.push_back(
      {{"role", "tool"}, {"tool_call_id", block["tool_use_id"]}, {"content", std::move(text)}});
  return true;
}

// One content block of a message with role `role` ("user" or "assistant").
ApiResult<bool> ConvertBlock(const OJson& block, const std::string& role, const std::string& where,
                             MessageParts* parts) {
  if (!block.is_object() || !block.contains("type") || !block["type"].is_string()) {
    return BadParam("messages", where + " must be a content block: an object with a string 'type'");
  }
  const std::string type = block["type"].get<std::string>();
  if (type == "text") {
    if (!block.contains("text") || !block["text"].is_string()) {
      return BadParam("messages", where + ": a text block needs a string 'text'");
    }
    if (!block["text"].get<std::string>().empty()) {
      parts->text_parts.push_back({{"type", "text"}, {"text", block["text"]}});
    }
  } else if (type == "image" || type == "document") {
    return BadParam("messages", fmt::format("{}: {} blocks are not supported: tandem serves "
                                            "text-only models; send the content as text",
                                            where, type));
  } else if (type == "thinking") {
    if (!block.contains("thinking") || !block["thinking"].is_string()) {
      return BadParam("messages", where + ": a thinking block needs a string 'thinking'");
    }
    parts->reasoning += block["thinking"].get<std::string>();
    parts->has_reasoning = true;
  } else if (type == "redacted_thinking") {
    // Opaque (encrypted) reasoning from Anthropic's API: accepted so a client can send a
    // conversation back as it got it, and dropped (vLLM too).
  } else if (type == "tool_use" && role == "assistant") {
    return ConvertToolUse(block, where, parts);
  } else if (type == "tool_result" && role == "user") {
    return ConvertToolResult(block, where, parts);
  } else {
    return BadParam("messages",
                    fmt::format("{}: a block of type '{}' is not accepted in a {} "
                                "message; expected text, thinking, {}",
                                where, type, role, role == "user" ? "tool_result" : "tool_use"));
  }
  return true;
}

// System text: a string, or text blocks concatenated (vLLM), without Claude Code's
// per-request billing header line (it would defeat prefix caching, as vLLM notes).
ApiResult<std::string> SystemText(const OJson& system, const std::string& where) {
  if (system.is_null()) return std::string();
  if (system.is_string()) return system.get<std::string>();
  if (!system.is_array()) {
    return BadParam("system", fmt::format("{} must be a string or an array of text blocks; "
                                          "found {}",
                                          where, JsonTypeWithArticle(system)));
  }
  std::string text;
  for (size_t k = 0; k < system.size(); ++k) {
    const OJson& block = system[k];
    if (StringField(block, "type") != "text" || !block.contains("text") ||
        !block["text"].is_string()) {
      return BadParam("system", fmt::format("{}[{}] must be {{\"type\": \"text\", \"text\": "
                                            "string}}",
                                            where, k));
    }
    const std::string piece = block["text"].get<std::string>();
    if (piece.rfind("x-anthropic-billing-header", 0) != 0) text += piece;
  }
  return text;
}

// Appends the chat messages of Anthropic message `i` to `out` (system text to `system`).
ApiResult<bool> ConvertMessage(const OJson& message, size_t i, OJson* out, std::string* system) {
  const std::string where = fmt::format("messages[{}]", i);
  if (!message.is_object() || !message.contains("role") || !message["role"].is_string()) {
    return BadParam("messages", where + " must be an object with a string 'role'");
  }
  const std::string role = message["role"].get<std::string>();
  const OJson content = message.contains("content") ? message["content"] : OJson();
  if (role == "system") {  // vLLM folds these into the system prompt
    TANDEM_API_ASSIGN_OR_RETURN(std::string text, SystemText(content, where + ".content"));
    *system += text;
    return true;
  }
  if (role != "user" && role != "assistant") {
    return BadParam("messages", fmt::format("{}.role '{}' is invalid; expected 'user' or "
                                            "'assistant'",
                                            where, role));
  }
  if (content.is_string()) {
    out->push_back({{"role", role}, {"content", content}});
    return true;
  }
  if (!content.is_array()) {
    return BadParam("messages", fmt::format("{}.content must be a string or an array of content "
                                            "blocks; found {}",
                                            where, JsonTypeWithArticle(content)));
  }
  MessageParts parts;
  for (size_t k = 0; k < content.size(); ++k) {
    TANDEM_API_ASSIGN_OR_RETURN(
        bool ok, ConvertBlock(content[k], role, fmt::format("{}.content[{}]", where, k), &parts));
    (void)ok;
  }
  for (OJson& tool_message : parts.tool_messages) out->push_back(std::move(tool_message));
  if (role == "user" && parts.text_parts.empty()) return true;  // only tool results
  OJson chat = {{"role", role}, {"content", std::move(parts.text_parts)}};
  if (parts.has_reasoning) chat["reasoning"] = parts.reasoning;
  if (!parts.tool_calls.empty()) chat["tool_calls"] = std::move(parts.tool_calls);
  out->push_back(std::move(chat));
  return true;
}

}  // namespace

bool FieldAbsent(const OJson& body, const char* field) {
  auto it = body.find(field);
  return it == body.end() || it->is_null();
}

ApiResult<OJson> ToChatMessages(const OJson& body) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) {
    return BadParam("messages", "'messages' is required: a non-empty array of messages");
  }
  OJson messages = OJson::array();
  std::string system;
  TANDEM_API_ASSIGN_OR_RETURN(
      system, SystemText(FieldAbsent(body, "system") ? OJson() : body["system"], "system"));
  for (size_t i = 0; i < it->size(); ++i) {
    TANDEM_API_ASSIGN_OR_RETURN(bool ok, ConvertMessage((*it)[i], i, &messages, &system));
    (void)ok;
  }
  if (!system.empty()) {
    OJson system_message = {{"role", "system"}, {"content", std::move(system)}};
    messages.insert(messages.begin(), std::move(system_message));
  }
  return messages;
}

}  // namespace tandem::server::anthropic
