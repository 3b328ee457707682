// HttpServer: the OpenAI-compatible HTTP/1.1 server: an http::HttpListener (Boost.Beast, async,
// keep-alive) on config.host:port whose requests go to ApiRouter.
// Usage: HttpServer s(config, engine, tokenizer); TANDEM_RETURN_IF_ERROR(s.Start()); s.Run();
// Stop() from any thread makes Run() return.
#pragma once

#include <memory>

#include "core/status.h"
#include "http/listener.h"
#include "router/engine_client.h"
#include "server/api_router.h"
#include "server/http_types.h"
#include "server/preprocess_pool.h"
#include "server/server_config.h"
#include "server/server_context.h"
#include "text/tokenizer.h"

namespace tandem::server {

class HttpServer {
 public:
  HttpServer(ServerConfig config, std::shared_ptr<router::EngineClient> engine,
             std::shared_ptr<const text::Tokenizer> tokenizer);
  ~HttpServer();

  // Validates the config, parses the chat template, binds and listens. Errors:
  // kInvalidArgument (bad config or chat template), kUnavailable naming host:port when the
  // address cannot be bound (e.g. the port is in use).
  Status Start();

  // The bound port (the picked one when config.port was 0). Valid after Start().
  uint16_t port() const { return listener_ ? listener_->port() : 0; }

  // Serves until Stop(), on config.num_io_threads threads (the caller's is one of them), with
  // config.num_preprocess_threads more for request preprocessing; returns once all have ended.
  void Run();

  // Makes Run() return; open connections are dropped, chat template renders in progress are
  // cancelled and queued requests dropped. Thread-safe; idempotent.
  void Stop();

  // Stops accepting, lets the responses in flight be written (at most `max_wait_s`), then
  // Stop()s. Thread-safe; returns at once.
  void StopWhenIdle(double max_wait_s);

 private:
  ServerContext context_;
  std::unique_ptr<PreprocessPool> pool_;  // made by Start()
  std::unique_ptr<ApiRouter> router_;
  std::unique_ptr<http::HttpListener> listener_;  // made by Start(); destroyed first
};

}  // namespace tandem::server
