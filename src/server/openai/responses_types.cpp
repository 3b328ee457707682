#include "server/openai/responses_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string>

#include "core/logging.h"
#include "server/openai/request_fields.h"
#include "server/openai/request_parsing.h"

namespace tandem::server::openai {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

namespace {

// Top-level fields a Responses request reads (the chat pass-through ones included); others are
// named in one warning, as vLLM logs them.
const std::set<std::string> kKnownFields = {"model",
                                            "input",
                                            "instructions",
                                            "max_output_tokens",
                                            "temperature",
                                            "top_p",
                                            "stream",
                                            "store",
                                            "previous_response_id",
                                            "tools",
                                            "tool_choice",
                                            "parallel_tool_calls",
                                            "text",
                                            "reasoning",
                                            "metadata",
                                            "user",
                                            "background",
                                            "include",
                                            "truncation",
                                            "service_tier",
                                            "top_logprobs",
                                            "max_tool_calls",
                                            "prompt",
                                            "conversation",
                                            "stream_options"};

// Fields with the same name and meaning in chat (vLLM's ResponsesRequest has top_k, logit_bias,
// skip_special_tokens and priority; the others are tandem's).
const char* const kPassThrough[] = {"top_k",
                                    "min_p",
                                    "seed",
                                    "presence_penalty",
                                    "frequency_penalty",
                                    "repetition_penalty",
                                    "stop",
                                    "stop_token_ids",
                                    "logit_bias",
                                    "skip_special_tokens",
                                    "ignore_eos",
                                    "chat_template_kwargs",
                                    "priority"};

bool Given(const OJson& body, const char* field) {
  auto it = body.find(field);
  return it != body.end() && !it->is_null();
}

// The value of an optional field that must have `type` (checked by `ok`), else a 400.
template <typename Check>
ApiResult<OJson> Optional(const OJson& body, const char* field, const char* type, Check ok) {
  if (!Given(body, field)) return OJson();
  const OJson& value = body[field];
  if (!ok(value)) {
    return BadParam(
        field, fmt::format("'{}' must be {}; found {}", field, type, JsonTypeWithArticle(value)));
  }
  return value;
}

bool IsBool(const OJson& v) { return v.is_boolean(); }
bool IsArray(const OJson& v) { return v.is_array(); }
bool IsObject(const OJson& v) { return v.is_object(); }
bool IsString(const OJson& v) { return v.is_string(); }

// Fields whose feature tandem does not have: a 400 naming them, never a silent 200.
ApiResult<bool> RefuseUnbuilt(const OJson& body) {
  TANDEM_API_ASSIGN_OR_RETURN(OJson background, Optional(body, "background", "a boolean", IsBool));
  if (background.is_boolean() && background.get<bool>()) {
    return BadParam("background",
                    "background mode is not supported by tandem; leave "
                    "'background' out and keep the connection open");
  }
  for (const char* field : {"conversation", "prompt"}) {
    if (Given(body, field)) {
      return BadParam(field, fmt::format("'{}' is not supported by tandem (no Conversations "
                                         "API, no stored prompt templates)",
                                         field));
    }
  }
  if (Given(body, "truncation") && body["truncation"] != "disabled") {
    return BadParam("truncation",
                    "only truncation \"disabled\" is supported: a conversation "
                    "longer than --max-model-len is a 400, never cut");
  }
  TANDEM_API_ASSIGN_OR_RETURN(OJson include,
                              Optional(body, "include", "an array of strings", IsArray));
  for (const OJson& entry : include.is_array() ? include : OJson::array()) {
    if (entry == "message.output_text.logprobs") {
      return BadParam("include",
                      "'include' \"message.output_text.logprobs\" is not supported "
                      "by tandem's Responses API yet; use /v1/chat/completions");
    }
    TLOG_WARN(
        "include entry {} has no effect: tandem returns no encrypted or hosted-tool "
        "content",
        entry.dump());
  }
  return true;
}

// tools: [{"type": "function", "name", "description", "parameters", "strict"}] → chat tools.
ApiResult<OJson> ChatTools(const OJson& tools) {
  OJson out = OJson::array();
  for (size_t k = 0; k < tools.size(); ++k) {
    const OJson& tool = tools[k];
    if (!tool.is_object() || StringMember(tool, "type", "") != "function" ||
        !tool.contains("name") || !tool["name"].is_string()) {
      return BadParam("tools", fmt::format("tools[{}] must be {{\"type\": \"function\", \"name\": "
                                           "string, \"parameters\": {{...}}}}; tandem serves no "
                                           "hosted tools",
                                           k));
    }
    OJson function = {{"name", tool["name"]}};
    for (const char* key : {"description", "parameters", "strict"}) {
      if (Given(tool, key)) function[key] = tool[key];
    }
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// tool_choice: "none" | "auto" | "required" | {"type": "function", "name"} → chat's shape.
ApiResult<OJson> ChatToolChoice(const OJson& choice) {
  if (choice.is_string()) return choice;
  if (choice.is_object() && StringMember(choice, "type", "") == "function" &&
      choice.contains("name") && choice["name"].is_string()) {
    return OJson{{"type", "function"}, {"function", {{"name", choice["name"]}}}};
  }
  return BadParam("tool_choice",
                  "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                  "{\"type\": \"function\", \"name\": string}");
}

// text.format → chat's response_format.
ApiResult<OJson> ResponseFormat(const OJson& text) {
  if (!text.is_object()) {
    return BadParam("text",
                    fmt::format("'text' must be an object; found {}", JsonTypeWithArticle(text)));
  }
  if (!Given(text, "format")) return OJson();
  const OJson& format = text["format"];
  if (!format.is_object() || !format.contains("type") || !format["type"].is_string()) {
    return BadParam("text.format",
                    "'text.format' must be {\"type\": \"text\" | \"json_object\" "
                    "| \"json_schema\", ...}");
  }
  if (format["type"] != "json_schema") return OJson{{"type", format["type"]}};
  OJson spec = OJson::object();
  for (const char* key : {"name", "description", "schema", "strict"}) {
    if (Given(format, key)) spec[key] = format[key];
  }
  return OJson{{"type", "json_schema"}, {"json_schema", std::move(spec)}};
}

// The echoed fields of the response object, OpenAI's defaults where the request has none.
ApiResult<json> Echo(const OJson& body) {
  TANDEM_API_ASSIGN_OR_RETURN(OJson metadata, Optional(body, "metadata", "an object", IsObject));
  TANDEM_API_ASSIGN_OR_RETURN(OJson reasoning, Optional(body, "reasoning", "an object", IsObject));
  TANDEM_API_ASSIGN_OR_RETURN(OJson user, Optional(body, "user", "a string", IsString));
  TANDEM_API_ASSIGN_OR_RETURN(
      OJson top_logprobs,
      Optional(body, "top_logprobs", "an integer in [0, 20]", [](const OJson& v) {
        return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= 20;
      }));
  return json{{"metadata", metadata},
              {"reasoning", reasoning},
              {"user", user},
              {"top_logprobs", top_logprobs.is_null() ? OJson(0) : top_logprobs},
              {"tools", Given(body, "tools") ? body["tools"] : OJson::array()},
              {"tool_choice", Given(body, "tool_choice") ? body["tool_choice"] : OJson("auto")},
              {"text", Given(body, "text") ? body["text"] : OJson{{"format", {{"type", "text"}}}}},
              {"service_tier", Given(body, "service_tier") ? body["service_tier"] : OJson("auto")},
              {"max_tool_calls", Given(body, "max_tool_calls") ? body["max_tool_calls"] : OJson()},
              {"truncation", "disabled"},
              {"background", false}};
}

ApiResult<bool> ParseFlags(const OJson& body, ResponsesRequest* request) {
  const json plain = body;
  TANDEM_API_ASSIGN_OR_RETURN(request->stream, GetBool(plain, "stream", false));
  TANDEM_API_ASSIGN_OR_RETURN(request->store, GetBool(plain, "store", true));
  TANDEM_API_ASSIGN_OR_RETURN(const bool parallel, GetBool(plain, "parallel_tool_calls", true));
  request->echo["parallel_tool_calls"] = parallel;
  request->echo["store"] = request->store;
  if (Given(body, "max_output_tokens")) {
    TANDEM_API_ASSIGN_OR_RETURN(const int64_t max, GetInt(plain, "max_output_tokens", 0));
    if (max < 1) {
      return BadParam("max_output_tokens",
                      fmt::format("'max_output_tokens' must be at least 1; got {}", max));
    }
    request->max_output_tokens = static_cast<int32_t>(std::min<int64_t>(max, INT32_MAX));
  }
  return true;
}

// The double that prints as `value`'s shortest float text: 0.95f → 0.95, not 0.949999988.
double ShortestDouble(float value) { return std::stod(fmt::format("{}", value)); }

}  // namespace

ApiResult<ResponsesRequest> ParseResponsesRequest(const OJson& body) {
  ResponsesRequest request;
  request.body = body;
  TANDEM_API_ASSIGN_OR_RETURN(bool ok, RefuseUnbuilt(body));
  (void)ok;
  if (!Given(body, "input")) return BadParam("input", "'input' is required");
  TANDEM_API_ASSIGN_OR_RETURN(request.input_messages, ParseResponsesInput(body["input"]));
  TANDEM_API_ASSIGN_OR_RETURN(OJson instructions,
                              Optional(body, "instructions", "a string", IsString));
  request.instructions = instructions.is_string() ? instructions.get<std::string>() : "";
  TANDEM_API_ASSIGN_OR_RETURN(OJson previous,
                              Optional(body, "previous_response_id", "a string", IsString));
  request.previous_response_id = previous.is_string() ? previous.get<std::string>() : "";
  TANDEM_API_ASSIGN_OR_RETURN(request.echo, Echo(body));
  TANDEM_API_ASSIGN_OR_RETURN(ok, ParseFlags(body, &request));
  request.echo["instructions"] = instructions;
  request.echo["previous_response_id"] = previous;
  WarnIgnoredFields(json(body), [] {
    std::set<std::string> known = kKnownFields;
    known.insert(std::begin(kPassThrough), std::end(kPassThrough));
    return known;
  }());
  return request;
}

ApiResult<ChatCompletionRequest> ToChatRequest(const ResponsesRequest& request,
                                               const OJson& history, const ServerContext& context) {
  const OJson& body = request.body;
  OJson chat = OJson::object();
  OJson& messages = chat["messages"] = OJson::array();
  if (!request.instructions.empty()) {
    messages.push_back({{"role", "system"}, {"content", request.instructions}});
  }
  for (const OJson& m : history) messages.push_back(m);
  for (const OJson& m : request.input_messages) messages.push_back(m);
  for (const char* field : {"model", "temperature", "top_p", "parallel_tool_calls"}) {
    if (Given(body, field)) chat[field] = body[field];
  }
  for (const char* field : kPassThrough) {
    if (Given(body, field)) chat[field] = body[field];
  }
  for (const std::string& field : RequestFieldNames()) {
    if (body.contains(field)) chat[field] = body[field];
  }
  if (Given(body, "text")) {
    TANDEM_API_ASSIGN_OR_RETURN(OJson format, ResponseFormat(body["text"]));
    if (!format.is_null()) chat["response_format"] = std::move(format);
  }
  if (Given(body, "tools")) {
    if (!body["tools"].is_array()) return BadParam("tools", "'tools' must be an array of tools");
    TANDEM_API_ASSIGN_OR_RETURN(chat["tools"], ChatTools(body["tools"]));
  }
  if (Given(body, "tool_choice")) {
    TANDEM_API_ASSIGN_OR_RETURN(chat["tool_choice"], ChatToolChoice(body["tool_choice"]));
  }
  if (Given(body, "reasoning") && Given(body["reasoning"], "effort")) {
    const OJson& effort = body["reasoning"]["effort"];
    if (!effort.is_string()) {
      return BadParam("reasoning",
                      "'reasoning.effort' must be a string (\"low\", \"medium\", "
                      "\"high\", ...)");
    }
    // As vLLM's chat: the template variable reasoning_effort (gpt-oss and others read it).
    OJson& kwargs = chat["chat_template_kwargs"];  // null or the request's own (pass-through)
    if (kwargs.is_null() || kwargs.is_object()) kwargs["reasoning_effort"] = effort;
  }
  auto parsed = ParseChatCompletionRequest(chat, context);
  if (parsed.ok()) return parsed;
  static const std::map<std::string, std::string> kRenamed = {{"messages", "input"},
                                                              {"response_format", "text.format"}};
  ApiError error = parsed.error();
  if (auto it = kRenamed.find(error.param); it != kRenamed.end()) error.param = it->second;
  return error;
}

json ResponseObject(const ResponsesRequest& request, const ChatCompletionRequest& chat,
                    const std::string& id, int64_t created_at, const std::string& status,
                    json output, json usage) {
  json object = request.echo;
  object["id"] = id;
  object["object"] = "response";
  object["created_at"] = created_at;
  object["status"] = status;
  object["error"] = nullptr;
  object["incomplete_details"] =
      status == "incomplete" ? json{{"reason", "max_output_tokens"}} : json(nullptr);
  object["model"] = chat.common.model;
  object["output"] = std::move(output);
  object["usage"] = std::move(usage);
  // The values sampling used (request or generation_config defaults), as vLLM reports them.
  object["temperature"] = ShortestDouble(chat.common.sampling.temperature);
  object["top_p"] = ShortestDouble(chat.common.sampling.top_p);
  object["max_output_tokens"] = chat.common.sampling.max_tokens;
  return object;
}

json ResponseUsageJson(const GenerationUsage& usage, int32_t num_reasoning_tokens) {
  return {{"input_tokens", usage.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", usage.cached_tokens}}},
          {"output_tokens", usage.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", num_reasoning_tokens}}},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

}  // namespace tandem::server::openai
