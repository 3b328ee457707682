// Anthropic's Messages API on the chat machinery, as vLLM serves it:
//   POST /v1/messages: the Anthropic body → the equivalent chat body (messages_types.h) →
//     ChatCompletionRequest → chat template → one Generation → ChatOutputParser (reasoning,
//     tool calls) → an Anthropic message (messages_response.h), whole or streamed
//     (message_stream.h).
//   POST /v1/messages/count_tokens: the same translation and template → {"input_tokens": N},
//     the prompt's token count (what /v1/messages reports as usage.input_tokens).
// Tools follow chat: tool_choice any / tool are enforced by a grammar (no flag needed);
// auto (the default with tools) needs --enable-auto-tool-choice and --tool-call-parser and is
// a 400 without them, as vLLM answers. Errors use Anthropic's shape (messages_response.h).
// Reference: vLLM entrypoints/anthropic/api_router.py and serving.py (create_messages,
// count_tokens).
#pragma once

#include <memory>

#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server::anthropic {

// Answers one /v1/messages request on `sink` (possibly later, from the engine's thread).
// `context` outlives every request. Runs on a preprocessing thread (renders, tokenizes).
void HandleMessages(const ServerContext& context, const HttpRequest& request,
                    std::shared_ptr<ResponseSink> sink);

// Answers one /v1/messages/count_tokens request on `sink`, at once. Errors: 400 as
// /v1/messages for the messages, tools and system; 404 for an unknown model. Unlike vLLM,
// tools without the auto-tool flags are counted rather than refused (nothing is generated).
void HandleCountTokens(const ServerContext& context, const HttpRequest& request,
                       std::shared_ptr<ResponseSink> sink);

}  // namespace tandem::server::anthropic
