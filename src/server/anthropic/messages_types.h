// Wire types of Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens): the
// request translated into the equivalent /v1/chat/completions body, so one chat path (parse,
// template, generation, output parsing) serves both APIs, as vLLM does.
//
// Translation (vLLM _convert_anthropic_to_openai_request, except where noted): system and
// messages as message_content.h says; stop_sequences → stop; tools [{name, description,
// input_schema}] → function tools; tool_choice {type: auto | any | tool | none, name,
// disable_parallel_tool_use} → "auto" | "required" | the named function | "none" (+
// parallel_tool_calls false; vLLM ignores it); no tool_choice with tools → "auto", as vLLM;
// thinking {type: enabled | adaptive | disabled} → chat_template_kwargs.enable_thinking true /
// false (not in vLLM; the request's own chat_template_kwargs, a vLLM extension, win), its
// budget_tokens not enforced; output_config.format {type: json_schema, schema} →
// response_format json_schema (vLLM); metadata accepted and ignored; n is always 1.
// Reference: vLLM entrypoints/anthropic/serving.py and protocol.py; Anthropic API reference
// "Messages" and "Count tokens" (docs.anthropic.com/en/api/messages).
#pragma once

#include <nlohmann/json.hpp>

#include "server/errors.h"

namespace tandem::server::anthropic {

enum class MessagesEndpoint { kMessages, kCountTokens };

// The /v1/chat/completions body equivalent to the Anthropic body `body` (key order kept, so
// tool schemas print as sent). kMessages requires max_tokens (an integer >= 1) and carries the
// sampling fields and stream; kCountTokens reads only model, messages, system, tools,
// tool_choice, thinking and chat_template_kwargs. Unknown top-level fields are ignored, named
// in one warning line. Errors: 400 naming the field: max_tokens missing or not a positive integer,
// a role other than user / assistant / system, a content block of an unknown type or the wrong
// shape, an image block, a tool without name or input_schema, a server tool, a malformed
// tool_choice or thinking. Thread-safe (pure).
ApiResult<nlohmann::ordered_json> ToChatCompletionBody(const nlohmann::ordered_json& body,
                                                       MessagesEndpoint endpoint);

}  // namespace tandem::server::anthropic
