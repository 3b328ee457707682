// Wire types of POST /v1/responses (the OpenAI Responses API, text in and out), translated into
// the chat machinery: a Responses request becomes a chat request (ChatCompletionRequest), whose
// prompt, sampling, structured outputs, tools and output parsing are chat's own.
//
// Request → chat: `instructions` → a leading system message; `input` (a string, or an array of
// messages and function_call / function_call_output items; responses_input.cpp) → messages;
// max_output_tokens → max_tokens (clamped to the room the prompt leaves, as vLLM);
// text.format → response_format; flat function tools → chat tools; tool_choice, temperature,
// top_p, parallel_tool_calls as they are; reasoning.effort → the template variable
// reasoning_effort (as vLLM's chat); top_k, min_p, seed, penalties, stop, logit_bias,
// chat_template_kwargs and vLLM's extra fields (request_fields.h) pass through with their chat
// meaning (tandem extensions, except vLLM's top_k, logit_bias and skip_special_tokens).
// Refused with a 400 naming the field: background, conversation, prompt, truncation "auto",
// include "message.output_text.logprobs", tools other than functions.
//
// Reference: OpenAI API reference, "Responses" (create, the response object); vLLM
// entrypoints/openai/protocol.py ResponsesRequest / ResponsesResponse.from_request,
// serving_responses.py _construct_input_messages, responses_utils.py.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "server/errors.h"
#include "server/openai/chat_completions_types.h"
#include "server/openai/generation.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// A Responses request, validated; the chat request is built once the history is known.
struct ResponsesRequest {
  nlohmann::ordered_json body;            // the request as sent (for the chat translation)
  std::string instructions;               // "" = none
  nlohmann::ordered_json input_messages;  // `input` as chat messages (ParseResponsesInput)
  std::string previous_response_id;       // "" = a new conversation
  std::optional<int32_t> max_output_tokens;
  bool stream = false;
  bool store = true;    // keep the response for GET and previous_response_id
  nlohmann::json echo;  // the request fields the response object echoes
};

// Parses and validates `body`. Errors: 400 naming the field (a wrong type, an input item that
// is not a message / function_call / function_call_output, content parts other than text, a
// refused feature listed above).
ApiResult<ResponsesRequest> ParseResponsesRequest(const nlohmann::ordered_json& body);

// `input` as chat messages: a string → one user message; message items → {role, content} with
// text parts joined by "\n"; function_call → an assistant message with tool_calls (merged into
// the assistant message just before it); function_call_output → a tool message; reasoning items
// are skipped (as vLLM). Errors: 400 (param "input") naming the item.
// Reference: vLLM responses_utils.py construct_chat_message_with_tool_call.
ApiResult<nlohmann::ordered_json> ParseResponsesInput(const nlohmann::ordered_json& input);

// The chat request that runs `request`: messages = [instructions] + `history` (the stored
// conversation of previous_response_id, or an empty array) + the input, parsed and validated
// by ParseChatCompletionRequest against `context`. Errors: those of ParseChatCompletionRequest,
// with `param` renamed to the Responses field (messages → input, response_format →
// text.format); 400 (param "reasoning") for an effort that is not a string.
ApiResult<ChatCompletionRequest> ToChatRequest(const ResponsesRequest& request,
                                               const nlohmann::ordered_json& history,
                                               const ServerContext& context);

// The response object: id, object "response", created_at, status ("in_progress", "completed",
// or "incomplete" with incomplete_details {reason: "max_output_tokens"}), output, usage (null
// when `usage` is null), the sampling values used and the echoed request fields.
nlohmann::json ResponseObject(const ResponsesRequest& request, const ChatCompletionRequest& chat,
                              const std::string& id, int64_t created_at, const std::string& status,
                              nlohmann::json output, nlohmann::json usage);

// usage: {input_tokens, input_tokens_details {cached_tokens}, output_tokens,
// output_tokens_details {reasoning_tokens}, total_tokens}.
nlohmann::json ResponseUsageJson(const GenerationUsage& usage, int32_t num_reasoning_tokens);

}  // namespace tandem::server::openai
