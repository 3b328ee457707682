#include "server/openai/chat_output.h"

#include "core/check.h"

namespace tandem::server::openai {

void ChatOutputParts::Append(ChatOutputParts other) {
  reasoning += other.reasoning;
  content += other.content;
  for (text::ToolCall& call : other.calls) calls.push_back(std::move(call));
}

ChatOutputParser::ChatOutputParser(const ServerConfig& config, const ChatInput& input,
                                   std::string_view prompt) {
  if (config.reasoning_parser == "qwen3") reasoning_.emplace(text::PromptThinkState(prompt));
  const bool has_tools = input.tools.is_array() && !input.tools.empty();
  if (has_tools && input.tool_choice != ToolChoice::kNone && !config.tool_call_parser.empty()) {
    auto parser = text::ToolCallParser::Create(config.tool_call_parser, input.tools);
    TANDEM_CHECK(parser.ok()) << parser.status().message();  // ServerConfig::Validate checked
    tools_ = std::move(parser).value();
  }
}

ChatOutputParts ChatOutputParser::ToTools(text::ReasoningDelta delta, bool finish) {
  ChatOutputParts out;
  out.reasoning = std::move(delta.reasoning);
  if (!tools_) {
    out.content = std::move(delta.content);
    return out;
  }
  text::ToolCallDelta t = tools_->Feed(delta.content);
  if (finish) {
    text::ToolCallDelta tail = tools_->Finish();
    t.content += tail.content;
    for (text::ToolCall& call : tail.calls) t.calls.push_back(std::move(call));
  }
  out.content = std::move(t.content);
  out.calls = std::move(t.calls);
  return out;
}

ChatOutputParts ChatOutputParser::Feed(std::string_view text) {
  text::ReasoningDelta delta =
      reasoning_ ? reasoning_->Feed(text) : text::ReasoningDelta{"", std::string(text)};
  return ToTools(std::move(delta), false);
}

ChatOutputParts ChatOutputParser::Finish() {
  text::ReasoningDelta delta = reasoning_ ? reasoning_->Finish() : text::ReasoningDelta{};
  return ToTools(std::move(delta), true);
}

ApiResult<bool> CheckToolChoice(const ChatInput& input, const ServerConfig& config) {
  switch (input.tool_choice) {
    case ToolChoice::kNone:
      return true;
    case ToolChoice::kAuto:
      if (!config.enable_auto_tool_choice || config.tool_call_parser.empty()) {
        return BadParam("tool_choice", "\"auto\" tool choice requires --enable-auto-tool-choice "
                                       "and --tool-call-parser to be set");
      }
      return true;
    case ToolChoice::kRequired:
    case ToolChoice::kNamed:
      if (config.tool_call_parser.empty()) {
        return BadParam("tool_choice", "tool_choice \"required\" or a named function needs "
                                       "--tool-call-parser on tandem (no structured-output "
                                       "decoding to force the call)");
      }
      return true;
  }
  return true;
}

nlohmann::json ToolCallJson(const text::ToolCall& call) {
  return {{"id", RandomRequestId("chatcmpl-tool-")},
          {"type", "function"},
          {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

}  // namespace tandem::server::openai
