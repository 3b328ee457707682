// Anthropic messages and system prompt → OpenAI chat messages (the content half of
// messages_types.h's translation).
//   system: a string or text blocks, concatenated (vLLM), without Claude Code's per-request
//     "x-anthropic-billing-header" block; "system" role messages are folded into it (vLLM);
//     the result is one leading system message.
//   user / assistant content: a string, or blocks: text → text parts; thinking → the
//     assistant's `reasoning` (templates read it as reasoning_content); redacted_thinking →
//     dropped; tool_use {id, name, input} (assistant) → tool_calls with object arguments;
//     tool_result {tool_use_id, content: string | text blocks, is_error} (user) → a "tool"
//     message before the rest of that user message, which is dropped when it has no text
//     (vLLM's order). is_error is checked for type and not shown to the model (vLLM).
//   image and document blocks are refused: tandem serves text-only models (vLLM passes images
//     to multimodal models).
// Reference: vLLM entrypoints/anthropic/serving.py (_convert_system_message, _convert_messages,
// _convert_block); Anthropic API reference "Messages" (content block types).
#pragma once

#include <nlohmann/json.hpp>

#include "server/errors.h"

namespace tandem::server::anthropic {

// The chat messages for the Anthropic body's `system` and `messages`. Errors: 400 (param
// "messages", or "system") naming the message and block: messages missing or empty, a role
// other than user / assistant / system, content of the wrong type, a block of an unknown type,
// of a type that does not belong to the role, or missing a required field, an image or
// document block. Thread-safe (pure).
ApiResult<nlohmann::ordered_json> ToChatMessages(const nlohmann::ordered_json& body);

// Whether `body` lacks `field` or holds null there (the Messages API reads both as not given).
bool FieldAbsent(const nlohmann::ordered_json& body, const char* field);

}  // namespace tandem::server::anthropic
