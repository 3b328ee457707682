#include "server/openai/chat_output.h"

#include "core/check.h"
#include "text/jinja/value.h"

namespace tandem::server::openai {

void ChatOutputParts::Append(ChatOutputParts other) {
  reasoning += other.reasoning;
  content += other.content;
  for (text::ToolCall& call : other.calls) calls.push_back(std::move(call));
  for (ToolCallStreamDelta& delta : other.call_deltas) call_deltas.push_back(std::move(delta));
}

void ChatOutputParser::StreamForcedCalls() {
  if (forced_) forced_stream_.emplace(forced_->required ? std::string() : forced_->name);
}

ChatOutputParser::ChatOutputParser(const ServerConfig& config, const ChatInput& input,
                                   std::string_view prompt)
    : parallel_tool_calls_(input.parallel_tool_calls) {
  if (config.reasoning_parser == "qwen3") reasoning_.emplace(text::PromptThinkState(prompt));
  const bool has_tools = input.tools.is_array() && !input.tools.empty();
  if (input.tool_choice == ToolChoice::kRequired || input.tool_choice == ToolChoice::kNamed) {
    // The grammar forced the output into vLLM's shapes; no tag parser is involved.
    forced_ =
        ForcedToolCalls{input.tool_choice == ToolChoice::kRequired, input.tool_choice_name, ""};
  } else if (has_tools && input.tool_choice != ToolChoice::kNone &&
             !config.tool_call_parser.empty()) {
    auto parser = text::ToolCallParser::Create(config.tool_call_parser, input.tools);
    TANDEM_CHECK(parser.ok()) << parser.status().message();  // ServerConfig::Validate checked
    tools_ = std::move(parser).value();
  }
}

// vLLM serving_chat: a named function's output is its arguments; "required" output is a JSON
// array of {"name", "parameters"}. Whole responses report the calls at the end (output that does
// not parse, cut by max_tokens, comes back as content); streams send them as they come.
ChatOutputParts ChatOutputParser::ToForcedCalls(text::ReasoningDelta delta, bool finish) {
  ChatOutputParts out;
  out.reasoning = std::move(delta.reasoning);
  if (forced_stream_) {  // streaming: the calls as they come (output cut short stays cut)
    out.call_deltas = forced_stream_->Feed(delta.content);
    num_forced_calls_ = forced_stream_->num_calls();
    return out;
  }
  forced_->text += delta.content;
  if (!finish) return out;
  if (!forced_->required) {
    out.calls.push_back({forced_->name, forced_->text});
    ++num_forced_calls_;
    return out;
  }
  const nlohmann::ordered_json calls =
      nlohmann::ordered_json::parse(forced_->text, nullptr, /*allow_exceptions=*/false);
  bool ok = calls.is_array() && !calls.empty();
  for (size_t i = 0; ok && i < calls.size(); ++i) {
    ok = calls[i].is_object() && calls[i].contains("name") && calls[i]["name"].is_string() &&
         calls[i].contains("parameters");
  }
  if (!ok) {
    out.content = forced_->text;
    return out;
  }
  for (const nlohmann::ordered_json& call : calls) {
    out.calls.push_back(
        {call["name"].get<std::string>(), text::jinja::ToJsonText(call["parameters"], -1)});
    ++num_forced_calls_;
  }
  return out;
}

ChatOutputParts ChatOutputParser::ToTools(text::ReasoningDelta delta, bool finish) {
  if (forced_) return ToForcedCalls(std::move(delta), finish);
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

// vLLM maybe_filter_parallel_tool_calls: with parallel_tool_calls false only the first call is
// answered.
ChatOutputParts ChatOutputParser::LimitCalls(ChatOutputParts parts) {
  if (parallel_tool_calls_) return parts;
  std::vector<text::ToolCall> kept;
  for (text::ToolCall& call : parts.calls) {
    if (num_answered_calls_ == 0) kept.push_back(std::move(call));
    ++num_answered_calls_;
  }
  parts.calls = std::move(kept);
  std::vector<ToolCallStreamDelta> first_only;  // forced calls: the grammar allowed one already
  for (ToolCallStreamDelta& delta : parts.call_deltas) {
    if (delta.index == 0) first_only.push_back(std::move(delta));
  }
  parts.call_deltas = std::move(first_only);
  return parts;
}

ChatOutputParts ChatOutputParser::Feed(std::string_view text) {
  text::ReasoningDelta delta =
      reasoning_ ? reasoning_->Feed(text) : text::ReasoningDelta{"", std::string(text)};
  return LimitCalls(ToTools(std::move(delta), false));
}

ChatOutputParts ChatOutputParser::Finish() {
  text::ReasoningDelta delta = reasoning_ ? reasoning_->Finish() : text::ReasoningDelta{};
  return LimitCalls(ToTools(std::move(delta), true));
}

ApiResult<bool> CheckToolChoice(const ChatInput& input, const ServerConfig& config) {
  switch (input.tool_choice) {
    case ToolChoice::kNone:
      return true;
    case ToolChoice::kAuto:
      if (!config.enable_auto_tool_choice || config.tool_call_parser.empty()) {
        return BadParam("tool_choice",
                        "\"auto\" tool choice requires --enable-auto-tool-choice "
                        "and --tool-call-parser to be set");
      }
      return true;
    case ToolChoice::kRequired:
    case ToolChoice::kNamed:
      return true;  // enforced by a grammar (structured_outputs.h), as vLLM does
  }
  return true;
}

nlohmann::json ToolCallJson(const text::ToolCall& call) {
  return {{"id", RandomRequestId("chatcmpl-tool-")},
          {"type", "function"},
          {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

}  // namespace tandem::server::openai
