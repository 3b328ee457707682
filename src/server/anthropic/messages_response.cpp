#include "server/anthropic/messages_response.h"

#include "server/json_dump.h"
#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::anthropic {

using nlohmann::json;

bool IsMessagesPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/v1/messages";
  return path.substr(0, kPrefix.size()) == kPrefix &&
         (path.size() == kPrefix.size() || path[kPrefix.size()] == '/');
}

const char* ErrorTypeFor(int http_status) {
  switch (http_status) {
    case 400:
    case 405:
    case 409:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

std::string AnthropicErrorBody(const ApiError& error) {
  const int http_status = HttpStatusFor(error.status.code());
  return DumpJson(
      {{"type", "error"},
       {"error", {{"type", ErrorTypeFor(http_status)}, {"message", error.status.message()}}}});
}

void SendError(ResponseSink& sink, const ApiError& error) {
  sink.SendResponse(HttpStatusFor(error.status.code()), "application/json",
                    AnthropicErrorBody(error));
}

StopReason ToStopReason(const std::string& finish_reason, const json& stop_reason, bool tool_used) {
  if (tool_used) return {"tool_use", nullptr};
  if (finish_reason == "length") return {"max_tokens", nullptr};
  if (stop_reason.is_string()) return {"stop_sequence", stop_reason};
  return {"end_turn", nullptr};  // EOS or a stop token
}

json ToolUseBlock(const text::ToolCall& call) {
  const nlohmann::ordered_json input = openai::ParseOrderedOrDiscarded(call.arguments);
  if (input.is_discarded() || !input.is_object()) return nullptr;
  return {{"type", "tool_use"},
          {"id", RandomRequestId("toolu_")},
          {"name", call.name},
          {"input", input}};
}

json ThinkingBlock(std::string thinking) {
  return {
      {"type", "thinking"}, {"thinking", std::move(thinking)}, {"signature", RandomRequestId("")}};
}

json ContentBlocks(openai::ChatOutputParts parts, int32_t* num_tool_use) {
  json tool_blocks = json::array();
  for (const text::ToolCall& call : parts.calls) {
    json block = ToolUseBlock(call);
    if (block.is_null()) {
      parts.content += call.arguments;  // not a call the client could run: say it as text
    } else {
      tool_blocks.push_back(std::move(block));
    }
  }
  *num_tool_use = static_cast<int32_t>(tool_blocks.size());
  if (*num_tool_use > 0) {  // text around the calls, without the blank lines between them
    const size_t end = parts.content.find_last_not_of(" \n\r\t");
    parts.content.resize(end == std::string::npos ? 0 : end + 1);
  }
  json content = json::array();
  if (!parts.reasoning.empty()) content.push_back(ThinkingBlock(std::move(parts.reasoning)));
  if (!parts.content.empty()) content.push_back({{"type", "text"}, {"text", parts.content}});
  for (json& block : tool_blocks) content.push_back(std::move(block));
  return content;
}

json MessageUsageJson(const openai::GenerationUsage& usage) {
  return {{"input_tokens", usage.prompt_tokens}, {"output_tokens", usage.completion_tokens}};
}

json MessageJson(const std::string& id, const std::string& model, json content,
                 const StopReason* stop, const openai::GenerationUsage& usage) {
  json message = {{"id", id},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", model},
                  {"content", std::move(content)}};
  message["stop_reason"] = stop ? json(stop->reason) : json(nullptr);
  message["stop_sequence"] = stop ? stop->sequence : json(nullptr);
  message["usage"] = MessageUsageJson(usage);
  return message;
}

}  // namespace tandem::server::anthropic
