// ApiRouter: maps (method, path) to a handler, after the API-key check for /v1/*.
// Unknown path → 404, known path with another method → 405 (both in the OpenAI error shape).
// Also serves the small endpoints: /health and /ping (503 until the engine is ready, then 200
// with an empty body), /version, /metrics.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "server/auth.h"
#include "server/http_types.h"
#include "server/server_context.h"

namespace tandem::server {

class ApiRouter {
 public:
  // `context` outlives the router.
  explicit ApiRouter(const ServerContext& context);

  // Answers `request` on `sink`. Runs on an I/O thread; never blocks.
  void Handle(HttpRequest request, std::shared_ptr<ResponseSink> sink) const;

 private:
  using Handler = std::function<void(const HttpRequest&, std::shared_ptr<ResponseSink>)>;
  void Add(const std::string& method, const std::string& path, Handler handler);

  const ServerContext& context_;
  ApiKeyAuth auth_;
  std::map<std::string, std::map<std::string, Handler>> routes_;  // path → method → handler
};

}  // namespace tandem::server
