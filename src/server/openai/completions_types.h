// Wire types of POST /v1/completions: the request and its parsing (prompt forms, echo,
// logprobs). The response JSON is completions.cpp's; logprobs are logprobs_json.h's.
// Reference: vLLM entrypoints/openai/protocol.py CompletionRequest / CompletionResponse /
// CompletionStreamResponse / CompletionLogProbs; OpenAI API reference "Completions".
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "server/errors.h"
#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::openai {

struct CompletionRequest {
  GenerationRequest common;
  // Tokenized prompts (BOS as add_special_tokens says), one or more: prompt p's choice j is
  // the response's choice p * n + j (vLLM's indexing).
  std::vector<std::vector<int32_t>> prompts;
  bool echo = false;         // prepend the prompt text to the completion
  bool prompt_only = false;  // echo with max_tokens 0: the prompt alone
  int32_t logprobs = -1;     // -1: none; k in [0, max_logprobs]: top-k per token
};

// Parses and validates a /v1/completions body: the one call that turns it into the request
// (sampling fields, token ids checked against the vocabulary, prompts tokenized and truncated,
// max_tokens resolved). `prompt` may be a string, an array of strings, an array of token ids
// or an array of arrays of token ids (at most 1024 prompts). Errors: 400 naming the field (prompt
// missing, empty, mixed, token id outside the vocab, logprobs out of range, context too long, ...),
// 404 for an unknown model. `body` keeps the request's key order (structured-output schemas keep
// their property order).
ApiResult<CompletionRequest> ParseCompletionRequest(const OrderedJson& body,
                                                    const ServerContext& context);

}  // namespace tandem::server::openai
