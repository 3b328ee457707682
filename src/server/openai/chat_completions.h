// POST /v1/chat/completions: messages → chat template → prompt ids → n replies, whole or
// streamed (SSE, `chat.completion.chunk`).
// Prompt encoding: the rendered text is encoded with add_special_tokens=false when it already
// starts with the BOS string (templates that write `{{ bos_token }}`), else with true, so BOS
// is never doubled nor lost. (vLLM always encodes chat prompts with add_special_tokens=False.)
// Reference: vLLM entrypoints/openai/serving_chat.py.
#pragma once

#include <memory>

#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// Answers one request on `sink` (possibly later, from the engine client's threads). Errors, in
// the OpenAI shape: those of ParseChatCompletionRequest, the X-data-parallel-rank header and
// PrepareChatPrompt (400/404), 503 when the engine is not ready; after a stream started, an
// error is one `data: {"error": …}` event before `data: [DONE]`. `context` outlives every
// request. Runs on a preprocessing thread (renders, tokenizes); never blocks on generation.
void HandleChatCompletions(const ServerContext& context, const HttpRequest& request,
                           std::shared_ptr<ResponseSink> sink);

}  // namespace tandem::server::openai
