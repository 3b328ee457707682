#include "server/anthropic/messages_types.h"

#include <fmt/format.h>

#include <set>
#include <string>

#include "core/logging.h"
#include "server/anthropic/message_content.h"
#include "server/openai/request_parsing.h"

namespace tandem::server::anthropic {

using OJson = nlohmann::ordered_json;
using openai::JsonTypeWithArticle;

namespace {

// Top-level fields the Messages endpoints read; others are ignored with a warning.
const std::set<std::string> kKnownFields = {
    "model",       "messages", "max_tokens", "system",        "stop_sequences",
    "temperature", "top_p",    "top_k",      "stream",        "tools",
    "tool_choice", "metadata", "thinking",   "output_config", "chat_template_kwargs"};

// Anthropic's custom tools → OpenAI function tools; input_schema without a type is an object
// schema (vLLM). Server tools (web search, bash, ...) have a `type` and are refused.
ApiResult<OJson> ConvertTools(const OJson& tools) {
  if (!tools.is_array()) {
    return BadParam("tools", "'tools' must be an array of tools");
  }
  OJson out = OJson::array();
  for (size_t k = 0; k < tools.size(); ++k) {
    const OJson& tool = tools[k];
    if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string()) {
      return BadParam("tools", fmt::format("tools[{}] must be {{\"name\": string, \"description\": "
                                           "string, \"input_schema\": object}}",
                                           k));
    }
    const std::string type = tool.contains("type") && tool["type"].is_string()
                                 ? tool["type"].get<std::string>()
                                 : "custom";
    if (type != "custom") {
      return BadParam("tools", fmt::format("tools[{}]: server tools (type '{}') are not supported; "
                                           "only custom tools with an input_schema",
                                           k, type));
    }
    if (!tool.contains("input_schema") || !tool["input_schema"].is_object()) {
      return BadParam("tools", fmt::format("tools[{}] ('{}') needs an 'input_schema' object", k,
                                           tool["name"].get<std::string>()));
    }
    OJson schema = tool["input_schema"];
    if (!schema.contains("type")) {
      schema["type"] = "object";
    }
    OJson function = {{"name", tool["name"]}};
    if (tool.contains("description") && tool["description"].is_string()) {
      function["description"] = tool["description"];
    }
    function["parameters"] = std::move(schema);
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// tool_choice {type: auto | any | tool | none, name, disable_parallel_tool_use}.
ApiResult<bool> ConvertToolChoice(const OJson& body, OJson* chat) {
  if (FieldAbsent(body, "tool_choice")) {
    return true;  // with tools, chat's default: "auto"
  }
  const OJson& choice = body["tool_choice"];
  const std::string type =
      choice.is_object() && choice.contains("type") && choice["type"].is_string()
          ? choice["type"].get<std::string>()
          : "";
  if (type == "auto" || type == "none") {
    (*chat)["tool_choice"] = type;
  } else if (type == "any") {
    (*chat)["tool_choice"] = "required";
  } else if (type == "tool" && choice.contains("name") && choice["name"].is_string()) {
    (*chat)["tool_choice"] = {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
  } else {
    return BadParam("tool_choice",
                    "'tool_choice' must be {\"type\": \"auto\" | \"any\" | "
                    "\"none\"} or {\"type\": \"tool\", \"name\": string}");
  }
  if (!FieldAbsent(choice, "disable_parallel_tool_use")) {
    if (!choice["disable_parallel_tool_use"].is_boolean()) {
      return BadParam("tool_choice", "'tool_choice.disable_parallel_tool_use' must be a boolean");
    }
    (*chat)["parallel_tool_calls"] = !choice["disable_parallel_tool_use"].get<bool>();
  }
  return true;
}

// thinking {type: enabled | adaptive | disabled, budget_tokens} → enable_thinking for the
// template (Qwen3 and others read it), unless chat_template_kwargs already sets it.
ApiResult<bool> ConvertThinking(const OJson& body, OJson* chat) {
  if (FieldAbsent(body, "thinking")) {
    return true;
  }
  const OJson& thinking = body["thinking"];
  const std::string type =
      thinking.is_object() && thinking.contains("type") && thinking["type"].is_string()
          ? thinking["type"].get<std::string>()
          : "";
  if (type != "enabled" && type != "adaptive" && type != "disabled") {
    return BadParam("thinking",
                    "'thinking' must be {\"type\": \"enabled\", \"budget_tokens\": "
                    "integer}, {\"type\": \"adaptive\"} or {\"type\": \"disabled\"}");
  }
  if (!FieldAbsent(thinking, "budget_tokens") && !thinking["budget_tokens"].is_number_integer()) {
    return BadParam("thinking", "'thinking.budget_tokens' must be an integer");
  }
  OJson& kwargs = (*chat)["chat_template_kwargs"];
  if (kwargs.is_null()) {
    kwargs = OJson::object();
  }
  if (kwargs.is_object() && !kwargs.contains("enable_thinking")) {
    kwargs["enable_thinking"] = type != "disabled";
  }
  return true;
}

// max_tokens (required), stop_sequences, temperature, top_p, top_k, stream, output_config.
ApiResult<bool> ConvertGenerationFields(const OJson& body, OJson* chat) {
  if (FieldAbsent(body, "max_tokens")) {
    return BadParam("max_tokens", "'max_tokens' is required");
  }
  const OJson& max_tokens = body["max_tokens"];
  if (!max_tokens.is_number_integer() || max_tokens.get<int64_t>() < 1) {
    return BadParam("max_tokens", fmt::format("'max_tokens' must be an integer >= 1; found {}",
                                              max_tokens.dump()));
  }
  (*chat)["max_tokens"] = max_tokens;
  if (!FieldAbsent(body, "stop_sequences")) {
    const OJson& stop = body["stop_sequences"];
    bool ok = stop.is_array();
    for (size_t k = 0; ok && k < stop.size(); ++k) {
      ok = stop[k].is_string();
    }
    if (!ok) {
      return BadParam("stop_sequences", "'stop_sequences' must be an array of strings");
    }
    (*chat)["stop"] = stop;
  }
  for (const char* field : {"temperature", "top_p", "top_k", "stream"}) {
    if (!FieldAbsent(body, field)) {
      (*chat)[field] = body[field];
    }
  }
  if (FieldAbsent(body, "output_config")) {
    return true;
  }
  const OJson& config = body["output_config"];
  if (!config.is_object()) {
    return BadParam("output_config", "'output_config' must be an object");
  }
  if (!FieldAbsent(config, "format")) {
    const OJson& format = config["format"];
    if (!format.is_object() || !format.contains("type") || format["type"] != "json_schema" ||
        !format.contains("schema") || !format["schema"].is_object()) {
      return BadParam("output_config",
                      "'output_config.format' must be {\"type\": "
                      "\"json_schema\", \"schema\": object}");
    }
    (*chat)["response_format"] = {
        {"type", "json_schema"},
        {"json_schema", {{"name", "json_schema"}, {"schema", format["schema"]}}}};
  }
  return true;
}

}  // namespace

ApiResult<OJson> ToChatCompletionBody(const OJson& body, MessagesEndpoint endpoint) {
  OJson chat = OJson::object();
  if (!FieldAbsent(body, "model")) {
    chat["model"] = body["model"];
  }
  TANDEM_API_ASSIGN_OR_RETURN(chat["messages"], ToChatMessages(body));
  if (!FieldAbsent(body, "tools")) {
    TANDEM_API_ASSIGN_OR_RETURN(chat["tools"], ConvertTools(body["tools"]));
  }
  TANDEM_API_ASSIGN_OR_RETURN(bool ok, ConvertToolChoice(body, &chat));
  if (!FieldAbsent(body, "chat_template_kwargs")) {
    chat["chat_template_kwargs"] = body["chat_template_kwargs"];
  }
  TANDEM_API_ASSIGN_OR_RETURN(ok, ConvertThinking(body, &chat));
  if (endpoint == MessagesEndpoint::kMessages) {
    TANDEM_API_ASSIGN_OR_RETURN(ok, ConvertGenerationFields(body, &chat));
  }
  (void)ok;
  std::string ignored;  // one warning line naming them, as vLLM logs ignored fields
  for (const auto& [key, unused] : body.items()) {
    if (!kKnownFields.count(key)) {
      ignored += (ignored.empty() ? "'" : ", '") + key + "'";
    }
  }
  if (!ignored.empty()) {
    TLOG_WARN("The following fields were present in the request but ignored: {}", ignored);
  }
  return chat;
}

}  // namespace tandem::server::anthropic
