// One streamed OpenAI completions / chat-completions request, timed on the client: TTFT at the
// first chunk carrying text, one ITL sample per further text chunk, E2EL at the end.
// Reference: vLLM benchmarks/lib/endpoint_request_func.py (async_request_openai_completions);
// deviation: chunks whose text is empty (e.g. a role-only chat delta, or a token that ends
// mid-UTF-8) are not counted as tokens, so TTFT is never a role chunk.
#pragma once

#include <string>

#include "apps/bench/http_target.h"
#include "apps/bench/random_dataset.h"
#include "apps/bench/request_output.h"
#include "core/status.h"

namespace tandem::apps::bench {

struct StreamRequestOptions {
  HttpTarget target;
  std::string endpoint;  // "/v1/completions" or "/v1/chat/completions"
  bool chat = false;
  std::string model;
  std::string api_key;
  bool ignore_eos = false;
  double idle_timeout_s = 600;
  double bench_start_s = 0;  // MonotonicSeconds() at the start of the run (for start_s)
};

// The JSON body for `request`: temperature 0, stream with include_usage, max_tokens, and
// ignore_eos when asked; completions send `prompt` as a token-id array, chat one user message.
std::string BuildRequestBody(const StreamRequestOptions& options, const BenchRequest& request);

// Sends `request` and measures it. Never throws: connection errors, non-200 statuses (with the
// server's error.message), `{"error":...}` events and streams ending before `[DONE]` give
// success=false with the error text.
RequestOutput SendStreamRequest(const StreamRequestOptions& options, const BenchRequest& request);

// GET /v1/models and return data[0].id; Unavailable / InvalidArgument with the reason.
Result<std::string> FetchFirstModelId(const HttpTarget& target, const std::string& api_key,
                                      double idle_timeout_s);

}  // namespace tandem::apps::bench
