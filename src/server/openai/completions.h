// POST /v1/completions: a prompt (text or token ids) → n completions, whole or streamed (SSE).
// Reference: vLLM entrypoints/openai/serving_completion.py (response and chunk shapes).
#pragma once

#include <memory>

#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// Answers one request on `sink` (possibly later, from the engine client's threads). Errors, in
// the OpenAI shape: those of ParseCompletionRequest and the X-data-parallel-rank header
// (400/404), 503 when the engine is not ready; after a stream started, an error is one
// `data: {"error": …}` event before `data: [DONE]`, and the call's other prompts are aborted.
// `context` outlives every request. Runs on a preprocessing thread (tokenizes); never blocks on
// generation.
void HandleCompletions(const ServerContext& context, const HttpRequest& request,
                       std::shared_ptr<ResponseSink> sink);

}  // namespace tandem::server::openai
