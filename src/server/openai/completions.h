// POST /v1/completions: a prompt (text or token ids) → n completions, whole or streamed (SSE).
// Reference: vLLM entrypoints/openai/serving_completion.py (response and chunk shapes).
#pragma once

#include <memory>

#include "server/errors.h"
#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// Answers one request on `sink` (possibly later, from the engine's thread). `context`
// outlives every request. Never blocks.
void HandleCompletions(const ServerContext& context, const HttpRequest& request,
                       std::shared_ptr<ResponseSink> sink);

// Sends `error` as an OpenAI error body with its HTTP status.
void SendError(ResponseSink& sink, const ApiError& error);

}  // namespace tandem::server::openai
