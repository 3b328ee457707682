// ServerContext: what every endpoint handler shares (read-only after start, except the
// engine client and the metrics registry, which are thread-safe themselves).
#pragma once

#include <memory>
#include <string>

#include "router/engine_client.h"
#include "server/metrics.h"
#include "server/server_config.h"
#include "text/tokenizer.h"

namespace tandem::text {
class ChatTemplate;
}

namespace tandem::server {

struct ServerContext {
  ServerConfig config;
  std::shared_ptr<router::EngineClient> engine;
  std::shared_ptr<const text::Tokenizer> tokenizer;
  std::shared_ptr<const text::ChatTemplate> chat_template;  // null: no --chat-template given
  Metrics* metrics = &Metrics::Global();
};

// A fresh random id with `prefix` ("cmpl-", "chatcmpl-"): prefix + 32 hex digits.
std::string RandomRequestId(const std::string& prefix);

}  // namespace tandem::server
