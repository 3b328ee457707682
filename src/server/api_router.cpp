#include "server/api_router.h"

#include <fmt/format.h>
#include <malloc.h>
#include <nlohmann/json.hpp>

#include <random>
#include <set>

#include "core/logging.h"
#include "server/anthropic/messages.h"
#include "server/anthropic/messages_response.h"
#include "server/cors.h"
#include "server/errors.h"
#include "server/json_dump.h"
#include "server/openai/chat_completions.h"
#include "server/openai/completions.h"
#include "server/openai/models.h"
#include "server/openai/responses.h"
#include "server/openai/serving.h"
#include "server/openai/tokenize.h"
#include "server/request_id.h"
#include "ui/assets.h"

namespace tandem::server {

using openai::SendError;

namespace {

// An error the router itself answers, in the shape the path's clients read: Anthropic's under
// /v1/messages, else OpenAI's.
void SendRouteError(const std::string& path, ResponseSink& sink, const ApiError& error) {
  if (anthropic::IsMessagesPath(path)) return anthropic::SendError(sink, error);
  SendError(sink, error);
}

// Bodies at least this big are followed by malloc_trim once handled.
constexpr size_t kTrimAfterBodyBytes = 1u << 20;

// 32 random hex digits (a UUID4's worth of randomness, as vLLM's uuid4().hex).
std::string RandomHexId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

}  // namespace

ApiRouter::ApiRouter(const ServerContext& context, PreprocessPool* pool)
    : context_(context), pool_(pool), auth_(context.config.api_keys) {
  if (context.config.enable_ui) ui_.emplace(ui::EmbeddedFiles(), "/playground.html");
  constexpr bool kOffload = true;
  const ServerContext& ctx = context_;
  Add(
      "POST", "/v1/completions",
      [&ctx](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        openai::HandleCompletions(ctx, r, std::move(s));
      },
      kOffload);
  Add(
      "POST", "/v1/chat/completions",
      [&ctx](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        openai::HandleChatCompletions(ctx, r, std::move(s));
      },
      kOffload);
  Add(
      "POST", "/v1/messages",
      [&ctx](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        anthropic::HandleMessages(ctx, r, std::move(s));
      },
      kOffload);
  Add(
      "POST", "/v1/messages/count_tokens",
      [&ctx](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        anthropic::HandleCountTokens(ctx, r, std::move(s));
      },
      kOffload);
  // The Responses API; its store lives as long as the routes (response_store.h).
  auto responses = std::make_shared<openai::ResponseStore>();
  Add(
      "POST", "/v1/responses",
      [&ctx, responses](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        openai::HandleCreateResponse(ctx, responses.get(), r, std::move(s));
      },
      kOffload);
  Add("GET", "/v1/responses/{id}",
      [responses](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        openai::HandleGetResponse(responses.get(), r, std::move(s));
      });
  Add("DELETE", "/v1/responses/{id}",
      [responses](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        openai::HandleDeleteResponse(responses.get(), r, std::move(s));
      });
  Add("GET", "/v1/models", [&ctx](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
    openai::HandleModels(ctx, r, std::move(s));
  });
  // vLLM serves these outside /v1 (so without the API key check).
  Add(
      "POST", "/tokenize",
      [&ctx](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        openai::HandleTokenize(ctx, r, std::move(s));
      },
      kOffload);
  Add(
      "POST", "/detokenize",
      [&ctx](const HttpRequest& r, std::shared_ptr<ResponseSink> s) {
        openai::HandleDetokenize(ctx, r, std::move(s));
      },
      kOffload);
  auto health = [&ctx](const HttpRequest&, std::shared_ptr<ResponseSink> s) {
    s->SendResponse(ctx.engine->IsReady() ? 200 : 503, "application/json", "");
  };
  Add("GET", "/health", health);
  Add("GET", "/ping", health);
  Add("POST", "/ping", health);  // SageMaker-style probes POST it (vLLM accepts both)
  // vLLM's /load: the generation requests in flight (0 unless --enable-server-load-tracking).
  Add("GET", "/load", [load = load_](const HttpRequest&, std::shared_ptr<ResponseSink> s) {
    s->SendResponse(200, "application/json", DumpJson({{"server_load", load->load()}}));
  });
  Add("GET", "/version", [&ctx](const HttpRequest&, std::shared_ptr<ResponseSink> s) {
    s->SendResponse(200, "application/json", DumpJson({{"version", ctx.config.version}}));
  });
  if (ui_) {
    // The playground asks whether to ask for a key (its page and assets: HandleUnrouted).
    Add("GET", "/playground/config", [&ctx](const HttpRequest&, std::shared_ptr<ResponseSink> s) {
      s->SendResponse(200, "application/json",
                      DumpJson({{"api_key_required", !ctx.config.api_keys.empty()}}));
    });
  }
  Add("GET", "/metrics", [&ctx](const HttpRequest&, std::shared_ptr<ResponseSink> s) {
    // Engine-side series once per DP rank (label engine="N"), as vLLM exports them.
    std::vector<protocol::EngineStats> stats;
    std::vector<bool> alive, served;
    for (int r = 0; r < ctx.engine->num_ranks(); ++r) {
      stats.push_back(ctx.engine->LatestStats(r));
      alive.push_back(ctx.engine->RankAlive(r));
      served.push_back(ctx.engine->ServesRank(r));
    }
    s->SendResponse(200, "text/plain; version=0.0.4; charset=utf-8",
                    ctx.metrics->Render(ctx.config.default_model_name(), ctx.config.max_model_len,
                                        stats, alive, served));
  });
}

void ApiRouter::Add(const std::string& method, const std::string& path, Handler handler,
                    bool offload) {
  routes_[path][method] = Route{std::move(handler), offload};
}

std::string ApiRouter::RoutePath(const std::string& path) const {
  // --root-path: a proxy's prefix, served as if absent (paths without it work too, as in vLLM).
  if (const std::string& root = context_.config.root_path;
      !root.empty() && path.compare(0, root.size(), root) == 0 &&
      (path.size() == root.size() || path[root.size()] == '/')) {
    return path.size() == root.size() ? "/" : path.substr(root.size());
  }
  return path;
}

bool ApiRouter::Authorized(const HttpRequest& request) const {
  // Anthropic's clients send the key as x-api-key.
  return auth_.Check(request.authorization()) || auth_.CheckKey(request.Header("x-api-key"));
}

bool ApiRouter::KeyRefused(const HttpRequest& request) const {
  // vLLM checks the key on every /v1 path, known or not, before routing and method dispatch
  // (its middleware): an unknown /v1 path without a key is a 401, not a 404 that would tell a
  // caller without a key which paths exist.
  return request.path.rfind("/v1", 0) == 0 && !Authorized(request);
}

bool ApiRouter::AnswersWithoutBody(HttpRequest head) const {
  head.path = RoutePath(head.path);
  if (CheckRequestId(head.Header("x-request-id"), "") || KeyRefused(head)) return true;
  const Methods* methods = PathMethods(head.path);
  return methods == nullptr || MethodRoute(*methods, head.method) == nullptr;
}

void ApiRouter::Handle(HttpRequest request, std::shared_ptr<ResponseSink> sink) const {
  request.path = RoutePath(request.path);
  // CORS first: a browser's preflight carries no API key (vLLM answers it the same way).
  if (ApplyCors(context_.config.cors, request, *sink)) return;
  // X-Request-Id becomes the response id (and is echoed below): bounded and printable.
  if (auto error = CheckRequestId(request.Header("x-request-id"), "the X-Request-Id header")) {
    return SendRouteError(request.path, *sink, BadParam("", *error));
  }
  if (context_.config.enable_request_id_headers) {
    // vLLM's --enable-request-id-headers: the client's X-Request-Id, else a new random one.
    std::string id(request.Header("x-request-id"));
    sink->AddResponseHeader("X-Request-Id", id.empty() ? RandomHexId() : std::move(id));
  }
  request.authorized = Authorized(request);
  if (KeyRefused(request)) {
    return SendRouteError(request.path, *sink,
                          {Status(StatusCode::kUnauthenticated,
                                  "missing or invalid API key; send 'Authorization: Bearer <key>' "
                                  "or 'x-api-key: <key>'"),
                           ""});
  }
  const Methods* methods = PathMethods(request.path);
  if (context_.config.enable_server_load_tracking && methods != nullptr &&
      (request.path == "/v1/completions" || request.path == "/v1/chat/completions" ||
       request.path == "/v1/messages" || request.path == "/v1/responses")) {
    sink = std::make_shared<LoadTrackingSink>(std::move(sink), load_);
  }
  if (methods == nullptr) return HandleUnrouted(request, *sink);
  const Route* route = MethodRoute(*methods, request.method);
  if (route == nullptr) {
    return SendMethodNotAllowed(request, AllowedMethods(*methods), *sink);
  }
  const Route& target = *route;
  if (!target.offload) return Run(target.handler, request, sink);
  const bool authorized = request.authorized;
  const std::string path = request.path;  // the request moves into the task
  const bool queued = pool_->Submit(
      [handler = &target.handler, request = std::move(request), sink]() mutable {
        TLOG_DEBUG("preprocessing {} {} ({} body bytes)", request.method, request.path,
                   request.body.size());
        Run(*handler, request, sink);
        if (request.body.size() >= kTrimAfterBodyBytes) {
          // A big body and its parse were freed: give the pages back to the system (glibc
          // keeps freed memory of a thread's arena; resting RSS crept up by gigabytes).
          request = HttpRequest{};
          malloc_trim(0);
        }
      },
      authorized);
  if (!queued && pool_->cancelled()) {
    SendRouteError(path, *sink, {Unavailable("the server is shutting down"), ""});
  } else if (!queued) {
    SendRouteError(path, *sink,
                   {Status(StatusCode::kResourceExhausted,
                           fmt::format("the server is overloaded: {} requests already wait to be "
                                       "preprocessed; retry later",
                                       context_.config.max_queued_preprocess)),
                    ""});
  }
}

const ApiRouter::Methods* ApiRouter::PathMethods(const std::string& path) const {
  auto found = routes_.find(path);
  if (const size_t slash = path.rfind('/');
      found == routes_.end() && slash != std::string::npos && slash + 1 < path.size()) {
    found = routes_.find(path.substr(0, slash + 1) + "{id}");  // /v1/responses/{id}
  }
  return found == routes_.end() ? nullptr : &found->second;
}

const ApiRouter::Route* ApiRouter::MethodRoute(const Methods& methods, const std::string& method) {
  auto found = methods.find(method);
  // HEAD is GET without the body (RFC 9110 §9.3.2; the session drops it), as Starlette adds HEAD
  // to every GET route of vLLM's.
  if (found == methods.end() && method == "HEAD") found = methods.find("GET");
  return found == methods.end() ? nullptr : &found->second;
}

std::string ApiRouter::AllowedMethods(const Methods& methods) {
  std::set<std::string> names;
  for (const auto& [name, unused] : methods) names.insert(name);
  if (names.count("GET")) names.insert("HEAD");
  std::string allowed;
  for (const std::string& name : names) allowed += (allowed.empty() ? "" : ", ") + name;
  return allowed;
}

void ApiRouter::SendMethodNotAllowed(const HttpRequest& request, const std::string& allowed,
                                     ResponseSink& sink) {
  sink.AddResponseHeader("Allow", allowed);  // a 405 must list them (RFC 9110 §15.5.6)
  SendRouteError(request.path, sink,
                 {Status(StatusCode::kMethodNotAllowed,
                         fmt::format("method {} is not allowed on {}; allowed: {}", request.method,
                                     request.path, allowed)),
                  ""});
}

void ApiRouter::HandleUnrouted(const HttpRequest& request, ResponseSink& sink) const {
  // The playground page (GET / and its hashed assets); no API key: the page asks for one,
  // when /playground/config says the server has one (asking /v1 would log a 401 first). No
  // fallback to the page: every other path, /v1/… above all, is a JSON 404.
  if (ui_ && (request.path == "/" || request.path == "/playground.html" ||
              request.path.rfind("/assets/", 0) == 0)) {
    if (ui_->Serve(request, sink, /*fallback_to_index=*/false)) return;
    if (ui_->Serves(request.path, /*fallback_to_index=*/false)) {
      return SendMethodNotAllowed(request, "GET, HEAD", sink);
    }
  }
  SendRouteError(request.path, sink,
                 {NotFound(fmt::format("no route for {} {}", request.method, request.path)), ""});
}

void ApiRouter::Run(const Handler& handler, const HttpRequest& request,
                    const std::shared_ptr<ResponseSink>& sink) {
  // Last line of defence: a handler that throws (a bug, or a library refusing an input we
  // did not foresee) answers this request with an error; the server and every other request
  // go on.
  try {
    handler(request, sink);
  } catch (const nlohmann::json::exception& e) {
    SendRouteError(
        request.path, *sink,
        {InvalidArgument(fmt::format("cannot handle this request body: {}", e.what())), ""});
  } catch (const std::exception& e) {
    SendRouteError(request.path, *sink,
                   {Internal(fmt::format("internal error handling {} {}: {}", request.method,
                                         request.path, e.what())),
                    ""});
  }
}

}  // namespace tandem::server
