// ChatOutputParser: one chat choice's generated text → reasoning_content, content and
// tool_calls, as `--reasoning-parser` and `--tool-call-parser` ask, incrementally (streaming)
// or at once. Reasoning is split first (text/reasoning_parser.h), tool calls are then looked
// for in the content only (text/tool_call_parser.h).
// Reference: vLLM entrypoints/openai/serving_chat.py (chat_completion_full_generator,
// chat_completion_stream_generator).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/errors.h"
#include "server/openai/chat_completions_types.h"
#include "server/openai/forced_tool_call_stream.h"
#include "text/reasoning_parser.h"
#include "text/tool_call_parser.h"

namespace tandem::server::openai {

struct ChatOutputParts {
  std::string reasoning;
  std::string content;
  std::vector<text::ToolCall> calls;
  // Forced tool calls streamed piece by piece (ChatOutputParser::StreamForcedCalls).
  std::vector<ToolCallStreamDelta> call_deltas;
  void Append(ChatOutputParts other);
};

class ChatOutputParser {
 public:
  // `prompt`: the rendered prompt, whose tail decides where reasoning starts.
  ChatOutputParser(const ServerConfig& config, const ChatInput& input, std::string_view prompt);

  ChatOutputParts Feed(std::string_view text);
  ChatOutputParts Finish();

  // Streaming: tool calls forced by tool_choice ("required" or a named function) come out in
  // `call_deltas` as they are generated (a call's name, then its arguments in pieces), not as
  // whole `calls` at the end. Call before the first Feed.
  void StreamForcedCalls();

  bool reasoning_enabled() const { return reasoning_.has_value(); }
  int32_t num_tool_calls() const {
    return forced_ ? num_forced_calls_ : tools_ ? tools_->num_calls() : 0;
  }

 private:
  // tool_choice "required" or a named function: the grammar-shaped output, kept whole.
  struct ForcedToolCalls {
    bool required = false;  // else the named function `name`
    std::string name;
    std::string text;  // the output so far
  };
  ChatOutputParts ToTools(text::ReasoningDelta delta, bool finish);
  ChatOutputParts ToForcedCalls(text::ReasoningDelta delta, bool finish);
  ChatOutputParts LimitCalls(ChatOutputParts parts);

  std::optional<text::ReasoningParser> reasoning_;
  std::unique_ptr<text::ToolCallParser> tools_;
  std::optional<ForcedToolCalls> forced_;
  std::optional<ForcedToolCallStream> forced_stream_;  // StreamForcedCalls
  int32_t num_forced_calls_ = 0;
  bool parallel_tool_calls_ = true;
  int32_t num_answered_calls_ = 0;  // calls seen, when parallel_tool_calls is false
};

// vLLM's tool_choice checks against the server flags. Errors: 400 (param "tool_choice") for
// "auto" without --enable-auto-tool-choice/--tool-call-parser. "required" and a named function
// need no flag: a grammar forces them.
ApiResult<bool> CheckToolChoice(const ChatInput& input, const ServerConfig& config);

// {"id": "chatcmpl-tool-<32 hex>", "type": "function", "function": {"name", "arguments"}}.
nlohmann::json ToolCallJson(const text::ToolCall& call);

}  // namespace tandem::server::openai
