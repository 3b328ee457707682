// MessageStream: one streamed /v1/messages reply as Anthropic's server-sent events, each
// `event: <type>\ndata: <json>\n\n`, in Anthropic's order:
//   message_start {message: content [], stop_reason null, usage {input_tokens, output_tokens 0}}
//   per content block: content_block_start {index, content_block}, content_block_delta
//     {index, delta: text_delta | thinking_delta | input_json_delta (a tool call's whole
//     arguments at once)}..., (thinking: a signature_delta), content_block_stop {index}
//   ping, once, right after the first content_block_start (or before message_delta when the
//     reply has no block)
//   message_delta {delta: {stop_reason, stop_sequence}, usage {input_tokens, output_tokens}}
//   message_stop
// A failure after message_start is an `error` event ({"type": "error", "error": {...}}) and
// the end of the stream.
//
// Invariant: at most one block is open; text, thinking and tool_use blocks follow in the order
// the parser produced them, a change of kind closes the open block. Whitespace at the end of
// the text so far is held back until more text follows, and dropped when a tool call comes
// (or the reply ends with tool calls), so the streamed text equals the whole reply's.
// Reference: Anthropic API reference "Streaming Messages"; vLLM entrypoints/anthropic/
// serving.py message_stream_converter (vLLM sends no ping).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "server/anthropic/messages_response.h"
#include "server/http_types.h"
#include "server/openai/chat_output.h"
#include "server/openai/generation.h"

namespace tandem::server::anthropic {

class MessageStream {
 public:
  // `sink`: a response whose stream (text/event-stream) the caller has started.
  explicit MessageStream(std::shared_ptr<ResponseSink> sink) : sink_(std::move(sink)) {}

  // message_start with `message` (MessageJson without a stop). Call first, once.
  void Start(const nlohmann::json& message);

  // The blocks and deltas for the parser's new output.
  void Write(openai::ChatOutputParts parts);

  // Closes the open block, then message_delta (stop from ToStopReason over the finished
  // choice's finish_reason / stop_reason and the tool_use blocks sent) and message_stop, and
  // ends the stream.
  void Finish(const std::string& finish_reason, const nlohmann::json& stop_reason,
              const openai::GenerationUsage& usage);

  // An `error` event, then the end of the stream.
  void Fail(const ApiError& error);

 private:
  enum class Block { kNone, kText, kThinking, kToolUse };
  void Send(std::string_view event, const nlohmann::json& data);
  void Open(Block kind, nlohmann::json content_block);
  void Close();
  void Delta(nlohmann::json delta);
  void WriteText(const std::string& text);

  std::shared_ptr<ResponseSink> sink_;
  Block open_ = Block::kNone;
  int32_t index_ = -1;  // the open (or last) block's index
  bool pinged_ = false;
  std::string held_space_;  // trailing whitespace of the text so far, not yet sent
  int32_t num_tool_use_ = 0;
};

}  // namespace tandem::server::anthropic
