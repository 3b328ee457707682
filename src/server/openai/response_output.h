// ResponseOutputBuilder: one generation's text, split by ChatOutputParser into reasoning,
// content and tool calls, → the `output` items of a Responses object, and (when streaming) the
// events that build those items on the client, in order.
//
// Invariant: an item is open (reasoning or message) or none is; every event that adds to an
// item names the item that is open, and an item is closed (its *.done events sent) before the
// next one is added. Non-streaming responses use the same builder, so the items of a streamed
// and a whole response are the same.
//
// Items, in the order the text produced them:
//   {"type": "reasoning", "id": "rs_…", "summary": [], "content": [{"type": "reasoning_text",
//    "text"}], "status"} — with --reasoning-parser;
//   {"type": "message", "id": "msg_…", "role": "assistant", "status", "content": [{"type":
//    "output_text", "text", "annotations": [], "logprobs": []}]} — the content; text that is only
//    whitespace opens no message while reasoning or a tool call is there too (it is dropped);
//   {"type": "function_call", "id": "fc_…", "call_id": "call_…", "name", "arguments", "status"}
//    — each tool call, once complete.
// Events (each later given a sequence_number): response.output_item.added/.done,
// response.content_part.added/.done, response.output_text.delta/.done,
// response.reasoning_text.delta/.done, response.function_call_arguments.delta/.done.
// Reference: OpenAI API reference, "Streaming events" of the Responses API; vLLM
// serving_responses.py _process_simple_streaming_events (whose content_index we do not copy:
// it counts deltas, where OpenAI's names the part).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "server/openai/chat_output.h"

namespace tandem::server::openai {

class ResponseOutputBuilder {
 public:
  // Receives each event without its sequence_number; empty when not streaming.
  using EventSink = std::function<void(nlohmann::json event)>;

  ResponseOutputBuilder(ChatOutputParser parser, EventSink on_event);

  // New generated text and the number of tokens it came from.
  void Feed(std::string_view text, int32_t num_tokens);
  // The end of the generation; `incomplete`: cut by max_output_tokens (the open item's status
  // becomes "incomplete").
  void Finish(bool incomplete);

  // The output items so far (all of them after Finish).
  const nlohmann::json& items() const { return items_; }
  // Tokens whose text went to reasoning (the think tags included once inside).
  int32_t num_reasoning_tokens() const { return num_reasoning_tokens_; }
  // The output as one assistant chat message ({"role", "content", "tool_calls"?}), for the
  // conversation a later previous_response_id continues; reasoning is left out (as vLLM).
  nlohmann::ordered_json AssistantMessage() const;

 private:
  enum class Open { kNone, kReasoning, kMessage };
  void Add(ChatOutputParts parts, int32_t num_tokens);
  void AddReasoning(const std::string& text);
  void AddContent(const std::string& text);
  void AddCall(const text::ToolCall& call);
  void OpenItem(Open kind);
  void CloseItem(const char* status);
  void Emit(const char* type, nlohmann::json fields);
  int32_t open_index() const { return static_cast<int32_t>(items_.size()) - 1; }

  ChatOutputParser parser_;
  EventSink on_event_;
  nlohmann::json items_ = nlohmann::json::array();
  Open open_ = Open::kNone;
  std::string open_text_;      // the open item's text so far
  std::string pending_space_;  // whitespace-only content not yet given a message
  int32_t num_reasoning_tokens_ = 0;
};

}  // namespace tandem::server::openai
