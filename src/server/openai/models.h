// GET /v1/models: the served model names, the first one first.
// Reference: vLLM entrypoints/openai/protocol.py ModelCard / ModelList.
#pragma once

#include <memory>

#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// The ModelList body: {"object":"list","data":[{"id","object":"model","created","owned_by":
// "tandem","root","parent":null,"max_model_len"}...]}.
std::string ModelListJson(const ServerConfig& config);

void HandleModels(const ServerContext& context, const HttpRequest& request,
                  std::shared_ptr<ResponseSink> sink);

}  // namespace tandem::server::openai
