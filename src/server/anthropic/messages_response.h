// The answers of /v1/messages in Anthropic's shapes: errors, stop reasons, content blocks and
// the whole message body. (The streamed form is message_stream.h.)
//   error:   {"type": "error", "error": {"type": "invalid_request_error", "message": "..."}}
//   message: {"id": "msg_...", "type": "message", "role": "assistant", "model", "content":
//            [{"type": "thinking", "thinking", "signature"} | {"type": "text", "text"} |
//             {"type": "tool_use", "id": "toolu_...", "name", "input": {...}}],
//            "stop_reason", "stop_sequence", "usage": {"input_tokens", "output_tokens"}}
// Reference: Anthropic API reference "Messages" and "Errors"; vLLM entrypoints/anthropic/
// serving.py messages_full_converter. Deviations from vLLM: errors carry Anthropic's error
// types (vLLM passes its OpenAI ones, "BadRequestError"); a matched stop sequence is
// "stop_sequence" with the sequence (vLLM says "end_turn"); ids are msg_ / toolu_ + 32 hex.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "server/errors.h"
#include "server/http_types.h"
#include "server/openai/chat_output.h"
#include "server/openai/generation.h"

namespace tandem::server::anthropic {

// True for /v1/messages and every path under it: their errors take Anthropic's shape.
bool IsMessagesPath(std::string_view path);

// Anthropic's error.type for an HTTP status: invalid_request_error (400, 405, 409),
// authentication_error (401), permission_error (403), not_found_error (404),
// request_too_large (413), rate_limit_error (429), overloaded_error (503: engine not ready,
// preprocessing queue full, shutting down), api_error (500 and the rest).
const char* ErrorTypeFor(int http_status);

// The error body {"type": "error", "error": {"type", "message"}}.
std::string AnthropicErrorBody(const ApiError& error);

// Answers `error` with its HTTP status and Anthropic's body.
void SendError(ResponseSink& sink, const ApiError& error);

// Why generation stopped, in Anthropic's terms.
struct StopReason {
  std::string reason;                 // end_turn | max_tokens | stop_sequence | tool_use
  nlohmann::json sequence = nullptr;  // the stop sequence that matched, else null
};

// A finished choice's finish_reason ("stop" / "length") and stop_reason (the matched stop
// string, a stop token id, or null) → StopReason; tool_use whenever `tool_used` (as vLLM maps
// chat's "tool_calls").
StopReason ToStopReason(const std::string& finish_reason, const nlohmann::json& stop_reason,
                        bool tool_used);

// {"type": "tool_use", "id": "toolu_<32 hex>", "name", "input"}; null when the arguments are
// not a JSON object (a forced call cut by max_tokens): the caller answers them as text.
nlohmann::json ToolUseBlock(const text::ToolCall& call);

// {"type": "thinking", "thinking", "signature": <32 random hex>} (clients send thinking blocks
// back with their signature; tandem does not check it).
nlohmann::json ThinkingBlock(std::string thinking);

// The content blocks of a whole reply, in order: thinking (when any), text (when any; trailing
// whitespace trimmed when there are tool calls, as chat's message), tool_use per call.
// `*num_tool_use`: the tool_use blocks made.
nlohmann::json ContentBlocks(openai::ChatOutputParts parts, int32_t* num_tool_use);

// {"input_tokens": prompt tokens, "output_tokens": generated tokens}.
nlohmann::json MessageUsageJson(const openai::GenerationUsage& usage);

// The message object with `content`, for a reply (stop set) or message_start (null stop).
nlohmann::json MessageJson(const std::string& id, const std::string& model, nlohmann::json content,
                           const StopReason* stop, const openai::GenerationUsage& usage);

}  // namespace tandem::server::anthropic
