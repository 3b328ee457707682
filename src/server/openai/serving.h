// What every generating endpoint (/v1/completions, /v1/chat/completions, /v1/responses,
// /v1/messages) shares between its validated request and its own response shaping: the one flow
// that starts its Generations on the client's connection (ServeGeneration), and the pieces of
// OpenAI responses they all write — an error as a body or as the end of an SSE stream, the usage
// object, the response id and the engine request ids.
//
// The flow, in order: engine ready? (else 503) → Generations made → client disconnect aborts
// them → SSE stream started (when streaming) with the endpoint's opening events → each
// Generation started; a start failure goes to that Generation's on_error, as an engine error
// would. An error of one Generation aborts the others of the call.
// Reference: vLLM entrypoints/openai/serving_engine.py OpenAIServing (create_error_response,
// create_streaming_error_response, _base_request_id); protocol.py UsageInfo.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/errors.h"
#include "server/http_types.h"
#include "server/openai/generation.h"
#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// Sends `error` as an OpenAI error body ({"error": {"message", "type", "param", "code"}}) with
// its HTTP status. Only before a stream started.
void SendError(ResponseSink& sink, const ApiError& error);

// Ends a started SSE stream with `error`: `data: {"error": …}`, then `data: [DONE]`, then the end
// of the stream (the status line, 200, went out with the stream's start).
void SendStreamError(ResponseSink& sink, const ApiError& error);

// Ends a started SSE stream normally: `final_chunk` first unless it is null (the usage chunk of
// stream_options.include_usage), then `data: [DONE]`, then the end of the stream.
void EndSseStream(ResponseSink& sink, const nlohmann::json& final_chunk);

// The `usage` object: prompt/completion/total tokens and prompt_tokens_details:
// {cached_tokens} with --enable-prompt-tokens-details, else null (vLLM).
nlohmann::json UsageJson(const GenerationUsage& usage);

// The last chunk of a stream with stream_options.include_usage: `envelope` (id, object, created,
// model) with "choices": [] and "usage": UsageJson(usage).
nlohmann::json UsageChunk(nlohmann::json envelope, const GenerationUsage& usage);

// The response id: `prefix` ("chatcmpl-", "cmpl-") + the X-Request-Id header
// (`header_request_id`), else + the body's request_id, else + 32 random hex digits.
std::string ResponseId(const char* prefix, const std::string& header_request_id,
                       const GenerationRequest& request);

// The base of the engine request ids ("<base>-<choice>"): the response id when tandem made it,
// else the response id plus random hex, so two calls given the same id never collide in the
// engine.
std::string EngineIdBase(const std::string& response_id, const std::string& header_request_id,
                         const GenerationRequest& request);

// One Generation an endpoint asks for (completions: one per prompt; the others: one).
struct GenerationSpec {
  std::string engine_request_id;          // base of its engine ids: "<base>-<choice>"
  std::vector<int32_t> prompt_token_ids;  // the prompt, tokenized (and truncated)
  // The endpoint's response shaping. on_error answers both an engine error and a failed start:
  // an error body before a stream, SendStreamError (or the endpoint's own event) within one.
  Generation::Callbacks callbacks;
};

// How an endpoint answers outside its Generation callbacks.
struct ServeHooks {
  // Answers an error before anything was sent (the engine is not ready): SendError, or the
  // endpoint's own shape (anthropic::SendError).
  void (*send_error)(ResponseSink& sink, const ApiError& error) = SendError;
  // Called when streaming, after the stream started and before the engine has the request:
  // writes the events a stream opens with (response.created, message_start). Null: none.
  std::function<void()> open_stream;
};

// Runs the flow above for `request` (validated, max_tokens resolved) on `sink`. Errors go out on
// `sink`: 503 via hooks.send_error when the engine is not ready; a start failure (e.g. the
// engine refused the request) via the failed Generation's on_error. `arrival_time_s`: when the
// HTTP request arrived (monotonic seconds, for TTFT and e2e latency). `context` outlives the
// call. Runs on a preprocessing thread; never blocks on generation; the callbacks run later on
// the engine client's threads.
void ServeGeneration(const ServerContext& context, const GenerationRequest& request,
                     double arrival_time_s, std::vector<GenerationSpec> generations,
                     const std::shared_ptr<ResponseSink>& sink, const ServeHooks& hooks = {});

}  // namespace tandem::server::openai
