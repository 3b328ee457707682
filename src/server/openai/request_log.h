// --enable-log-requests: vLLM's RequestLogger. When a request reaches the engine, one INFO line
// with its id and sampling parameters ("Received request cmpl-…: params: SamplingParams(n=1,
// …), lora_request: None."), and at DEBUG (TANDEM_LOG_LEVEL=debug) one with its prompt and
// prompt token ids, cut to --max-log-len characters and ids.
// Reference: vLLM vllm/entrypoints/logger.py RequestLogger.log_inputs; SamplingParams.__repr__
// (field names and order; the fields tandem has).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// `request`'s sampling parameters as vLLM prints them: "SamplingParams(n=1, …)".
std::string SamplingParamsRepr(const GenerationRequest& request);

// Logs `request_id` as received (above), when context.config.enable_log_requests. Thread-safe.
void LogReceivedRequest(const ServerContext& context, const std::string& request_id,
                        const std::vector<int32_t>& prompt_token_ids,
                        const GenerationRequest& request);

}  // namespace tandem::server::openai
