#include "server/anthropic/message_stream.h"

#include "server/json_dump.h"
#include "server/server_context.h"

namespace tandem::server::anthropic {

using nlohmann::json;

namespace {

// `event: <event>\ndata: <payload>\n\n` (compact JSON holds no newline).
std::string SseNamedEvent(std::string_view event, std::string_view payload) {
  std::string out;
  out.reserve(event.size() + payload.size() + 16);
  out.append("event: ").append(event).append("\ndata: ").append(payload).append("\n\n");
  return out;
}

}  // namespace

void MessageStream::Send(std::string_view event, const json& data) {
  sink_->SendStreamData(SseNamedEvent(event, DumpJson(data)));
}

void MessageStream::Start(const json& message) {
  Send("message_start", {{"type", "message_start"}, {"message", message}});
}

void MessageStream::Open(Block kind, json content_block) {
  Close();
  ++index_;
  open_ = kind;
  Send("content_block_start", {{"type", "content_block_start"},
                               {"index", index_},
                               {"content_block", std::move(content_block)}});
  if (!pinged_) {  // Anthropic sends its ping right after the first block starts
    pinged_ = true;
    Send("ping", {{"type", "ping"}});
  }
}

void MessageStream::Close() {
  if (open_ == Block::kNone) return;
  if (open_ == Block::kThinking) {
    Delta({{"type", "signature_delta"}, {"signature", RandomRequestId("")}});
  }
  Send("content_block_stop", {{"type", "content_block_stop"}, {"index", index_}});
  open_ = Block::kNone;
}

void MessageStream::Delta(json delta) {
  Send("content_block_delta",
       {{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(delta)}});
}

void MessageStream::WriteText(const std::string& text) {
  const size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) {
    held_space_ += text;
    return;
  }
  std::string out = held_space_ + text.substr(0, end + 1);
  held_space_ = text.substr(end + 1);
  if (open_ != Block::kText) Open(Block::kText, {{"type", "text"}, {"text", ""}});
  Delta({{"type", "text_delta"}, {"text", std::move(out)}});
}

void MessageStream::Write(openai::ChatOutputParts parts) {
  if (!parts.reasoning.empty()) {
    if (open_ != Block::kThinking) {
      Open(Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
    }
    Delta({{"type", "thinking_delta"}, {"thinking", std::move(parts.reasoning)}});
  }
  WriteText(parts.content);
  for (const text::ToolCall& call : parts.calls) {
    json block = ToolUseBlock(call);
    if (block.is_null()) {  // not a call the client could run: say it as text
      WriteText(call.arguments);
      continue;
    }
    held_space_.clear();
    block["input"] = json::object();  // the arguments follow as input_json_delta
    Open(Block::kToolUse, std::move(block));
    Delta({{"type", "input_json_delta"}, {"partial_json", call.arguments}});
    Close();
    ++num_tool_use_;
  }
}

void MessageStream::Finish(const std::string& finish_reason, const json& stop_reason,
                           const openai::GenerationUsage& usage) {
  if (num_tool_use_ == 0 && !held_space_.empty()) {
    if (open_ != Block::kText) Open(Block::kText, {{"type", "text"}, {"text", ""}});
    Delta({{"type", "text_delta"}, {"text", held_space_}});
    held_space_.clear();
  }
  Close();
  if (!pinged_) {
    pinged_ = true;
    Send("ping", {{"type", "ping"}});
  }
  const StopReason stop = ToStopReason(finish_reason, stop_reason, num_tool_use_ > 0);
  Send("message_delta",
       {{"type", "message_delta"},
        {"delta", {{"stop_reason", stop.reason}, {"stop_sequence", stop.sequence}}},
        {"usage", MessageUsageJson(usage)}});
  Send("message_stop", {{"type", "message_stop"}});
  sink_->EndStream();
}

void MessageStream::Fail(const ApiError& error) {
  sink_->SendStreamData(SseNamedEvent("error", AnthropicErrorBody(error)));
  sink_->EndStream();
}

}  // namespace tandem::server::anthropic
