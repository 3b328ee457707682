// ApiRouter: maps (method, path) to a handler, after the API-key check for /v1/*.
// Unknown path → 404, known path with another method → 405 with an Allow header (both in the
// OpenAI error shape); HEAD is answered wherever GET is, without the body.
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
#include "server/server_context.h"
#include "server/server_load.h"

namespace tandem::server {

class ApiRouter {
 public:
  // `context` and `pool` outlive the router.
  ApiRouter(const ServerContext& context, PreprocessPool* pool);

  // Answers `request` on `sink`: at once, or by queueing its handler on the pool (503 when the
  // pool's queue is full). Runs on an I/O thread; never blocks.
  void Handle(HttpRequest request, std::shared_ptr<ResponseSink> sink) const;

  // Whether Handle answers `head` (a request whose body has not been read) without its body:
  // an X-Request-Id refused, no API key on /v1, no route, a method not allowed. The session
  // then answers an `Expect: 100-continue` request at once instead of asking for its body
  // (http::SessionOptions::answers_without_body). Any thread; never blocks.
  bool AnswersWithoutBody(HttpRequest head) const;

 private:
  using Handler = std::function<void(const HttpRequest&, std::shared_ptr<ResponseSink>)>;
  struct Route {
    Handler handler;
    bool offload = false;  // runs on the PreprocessPool
  };
  using Methods = std::map<std::string, Route>;  // method → route
  void Add(const std::string& method, const std::string& path, Handler handler,
           bool offload = false);
  // `path` without the --root-path prefix.
  std::string RoutePath(const std::string& path) const;
  // Whether `request` carries a configured API key (always, when --api-key is not set).
  bool Authorized(const HttpRequest& request) const;
  // Whether `request` (its path without the root path) needs an API key it does not carry.
  bool KeyRefused(const HttpRequest& request) const;
  // The routes of `path`: its own, else those of "<its parent>/{id}"; null when none.
  const Methods* PathMethods(const std::string& path) const;
  // The route of `method` among `methods` (HEAD takes GET's); null when none.
  static const Route* MethodRoute(const Methods& methods, const std::string& method);
  // The Allow header's value for `methods`: "GET, HEAD", "DELETE, GET, HEAD", "POST".
  static std::string AllowedMethods(const Methods& methods);
  // 405 naming the method and, in the message and the Allow header, `allowed`.
  static void SendMethodNotAllowed(const HttpRequest& request, const std::string& allowed,
                                   ResponseSink& sink);
  // A path without routes: the playground's files (405 for other methods), else 404.
  void HandleUnrouted(const HttpRequest& request, ResponseSink& sink) const;
  // Runs `handler`; an exception it throws answers this request with an error.
  static void Run(const Handler& handler, const HttpRequest& request,
                  const std::shared_ptr<ResponseSink>& sink);

  const ServerContext& context_;
  PreprocessPool* pool_;
  ApiKeyAuth auth_;
  std::optional<http::StaticSite> ui_;  // the playground page at / (unless --no-ui)
  ServerLoad load_ = std::make_shared<std::atomic<int64_t>>(0);  // GET /load
  std::map<std::string, Methods> routes_;                        // path → method → route
};

}  // namespace tandem::server
