// POST /v1/chat/completions: messages → chat template → prompt ids → n replies, whole or
// streamed (SSE, `chat.completion.chunk`).
// Prompt encoding: the rendered text is encoded with add_special_tokens=false when it already
// starts with the BOS string (templates that write `{{ bos_token }}`), else with true, so BOS
// is never doubled nor lost. (vLLM always encodes chat prompts with add_special_tokens=False.)
// Reference: vLLM entrypoints/openai/serving_chat.py.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

void HandleChatCompletions(const ServerContext& context, const HttpRequest& request,
                           std::shared_ptr<ResponseSink> sink);

}  // namespace tandem::server::openai
