// ApiRouter: maps (method, path) to a handler, after the API-key check for /v1/*.
// Unknown path → 404, known path with another method → 405 (both in the OpenAI error shape).
// A path with no route of its own matches the route "<its parent>/{id}" when there is one
// (GET /v1/responses/resp_1 → "/v1/responses/{id}"); the handler reads the id from the path.
// Also serves the small endpoints: /health and /ping (503 until the engine is ready, then 200
// with an empty body), /version, /metrics.
// The endpoints that parse a body (completions, chat, tokenize, detokenize) run on the
// PreprocessPool, the small ones on the calling I/O thread (preprocess_pool.h says why).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "http/static_files.h"
#include "server/auth.h"
#include "server/http_types.h"
#include "server/preprocess_pool.h"
#include "server/server_load.h"
#include "server/server_context.h"

namespace tandem::server {

class ApiRouter {
 public:
  // `context` and `pool` outlive the router.
  ApiRouter(const ServerContext& context, PreprocessPool* pool);

  // Answers `request` on `sink`: at once, or by queueing its handler on the pool (503 when the
  // pool's queue is full). Runs on an I/O thread; never blocks.
  void Handle(HttpRequest request, std::shared_ptr<ResponseSink> sink) const;

 private:
  using Handler = std::function<void(const HttpRequest&, std::shared_ptr<ResponseSink>)>;
  struct Route {
    Handler handler;
    bool offload = false;  // runs on the PreprocessPool
  };
  void Add(const std::string& method, const std::string& path, Handler handler,
           bool offload = false);
  // Runs `handler`; an exception it throws answers this request with an error.
  static void Run(const Handler& handler, const HttpRequest& request,
                  const std::shared_ptr<ResponseSink>& sink);

  const ServerContext& context_;
  PreprocessPool* pool_;
  ApiKeyAuth auth_;
  std::optional<http::StaticSite> ui_;  // the playground page at / (unless --no-ui)
  ServerLoad load_ = std::make_shared<std::atomic<int64_t>>(0);  // GET /load
  std::map<std::string, std::map<std::string, Route>> routes_;  // path → method → route
};

}  // namespace tandem::server
