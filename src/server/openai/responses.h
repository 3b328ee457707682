// The OpenAI Responses API on the chat machinery:
//   POST /v1/responses         input (+ the stored conversation of previous_response_id) →
//                              chat template → one generation → a response object, whole or
//                              streamed as named SSE events (`event: response.created` …
//                              `event: response.completed`, each with a sequence_number);
//   GET /v1/responses/{id}     a stored response (404 when unknown or evicted);
//   DELETE /v1/responses/{id}  forgets a stored response (OpenAI's; vLLM has no DELETE).
// Responses are stored (store != false) in a ResponseStore the router owns.
// Deviations from OpenAI, as vLLM: a stream ends with response.completed also when the status is
// "incomplete" (OpenAI sends response.incomplete); max_output_tokens echoes the limit used.
// Reference: vLLM entrypoints/openai/serving_responses.py; OpenAI API reference, "Responses".
#pragma once

#include <memory>

#include "server/http_types.h"
#include "server/openai/response_store.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// Answers POST /v1/responses on `sink` (possibly later, from the engine's thread). Errors, in
// the OpenAI shape: those of the chat path, with Responses field names; 404 (param
// "previous_response_id") "Response with id '…' not found." for an id not in `store`. After a
// stream started, an error is one `event: error` ({"type": "error", "code", "message", "param",
// "sequence_number"}) and the stream ends. `context` and `store` outlive every request; runs on
// a preprocessing thread; never blocks on generation.
void HandleCreateResponse(const ServerContext& context, ResponseStore* store,
                          const HttpRequest& request, std::shared_ptr<ResponseSink> sink);

// GET /v1/responses/{id}: the stored response object, or 404 naming the id.
void HandleGetResponse(ResponseStore* store, const HttpRequest& request,
                       std::shared_ptr<ResponseSink> sink);

// DELETE /v1/responses/{id}: {"id", "object": "response.deleted", "deleted": true}, or 404.
void HandleDeleteResponse(ResponseStore* store, const HttpRequest& request,
                          std::shared_ptr<ResponseSink> sink);

}  // namespace tandem::server::openai
