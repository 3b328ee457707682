#include "cluster/manager/manager.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>

#include "cluster/manager/controller.h"
#include "cluster/manager/credentials.h"
#include "cluster/manager/list_query.h"
#include "cluster/manager/resources.h"
#include "cluster/manager/rest_api.h"
#include "cluster/manager/rest_util.h"
#include "core/clock.h"
#include "core/logging.h"
#include "ui/assets.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Table;

namespace {

constexpr int64_t kSessionLifetimeS = 7 * 24 * 3600;
// How long a stopping manager waits for the gateway's responses to be written.
constexpr double kGatewayDrainS = 5;

// Whether `path` is under an API's prefix (its first segment v1, v2, auth or api): never the
// console's page. Segments, not prefixes: /api-keys is a console route.
bool IsApiPath(std::string_view path) {
  for (std::string_view api : {"/v1", "/v2", "/auth", "/api"}) {
    if (path.rfind(api, 0) == 0 && (path.size() == api.size() || path[api.size()] == '/')) {
      return true;
    }
  }
  return false;
}

// Whether Route answers `head` without reading its body, whoever sends it: everything outside
// the APIs (the console's pages, /healthz, /version, /metrics: none reads a body) and the
// gateway's paths other than its two POST routes. /v2 and /auth ask for the body (the caller
// check is Manager's: a /v1 or /v2 request without valid credentials is a 401 either way).
bool RouteIgnoresBody(const http::HttpRequest& head) {
  if (!IsApiPath(head.path)) {
    return true;
  }
  if (head.path != "/v1" && head.path.rfind("/v1/", 0) != 0) {
    return false;
  }
  return head.method != "POST" ||
         (head.path != "/v1/chat/completions" && head.path != "/v1/completions");
}

// Writes `text` to `path` readable by the owner only.
Status WriteSecretFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    return Unavailable(fmt::format("cannot write '{}'", path));
  }
  out << text << "\n";
  out.close();
  chmod(path.c_str(), 0600);
  return Status::Ok();
}

}  // namespace

Manager::Manager(ManagerConfig config)
    : config_(std::move(config)), ui_(ui::EmbeddedFiles(), "/index.html") {}

Manager::~Manager() {
  Stop();
  if (controller_.joinable()) {
    controller_.join();
  }
  listener_.reset();
  gateway_.reset();  // waits for the proxied requests in flight
  auth_.reset();
}

Status Manager::Start() {
  if (config_.data_dir.empty()) {
    return InvalidArgument("--data-dir is required");
  }
  std::error_code ec;
  std::filesystem::create_directories(config_.data_dir, ec);
  if (ec) {
    return InvalidArgument(
        fmt::format("--data-dir '{}': cannot create it: {}", config_.data_dir, ec.message()));
  }
  const std::string url = config_.database_url.empty()
                              ? "sqlite://" + config_.data_dir + "/manager.db"
                              : config_.database_url;
  auto store = store::Store::Open(url);
  if (!store.ok()) {
    return store.status();
  }
  store_ = std::move(store).value();
  TLOG_INFO("manager: store {} at schema version {}", store::RedactDatabaseUrl(url),
            store_->schema_version());
  TANDEM_RETURN_IF_ERROR(Bootstrap());
  gateway_ = std::make_unique<Gateway>(*store_);
  TANDEM_RETURN_IF_ERROR(gateway_->Start());

  http::SessionOptions options;
  options.max_body_bytes = 4u << 20;
  options.keep_alive_timeout_s = 60;
  // Bodies held (received, waiting for the store or an instance) over all clients and per
  // address, and open connections: bounded as in `tandem serve` (http/body_budget.h).
  options.body_budget = std::make_shared<http::BodyBudget>(int64_t{256} << 20, int64_t{64} << 20);
  options.max_connections = 8192;
  // Errors the session answers itself (body too large, malformed HTTP) in the shape of the path's
  // API: OpenAI's on the /v1 gateway, GPUStack's elsewhere.
  options.error_body = [](int http_status, const std::string& message, const std::string& path) {
    return path.rfind("/v1/", 0) == 0 ? OpenAiErrorBody(http_status, message)
                                      : ManagementErrorBody(http_status, message);
  };
  // Expect: 100-continue gets the answer at once, without "100 Continue", when the body would go
  // unread: a route that reads none, a /v1 or /v2 request whose caller is refused (401), or a
  // /v2 route the caller may not use (403: admin only, a worker key's or the registration
  // token's routes; RestApi::Authorize).
  options.answers_without_body = [this](const http::HttpRequest& head) {
    if (RouteIgnoresBody(head)) {
      return true;
    }
    const bool v2 = head.path == "/v2" || head.path.rfind("/v2/", 0) == 0;
    const bool keyed_api = v2 || head.path == "/v1" || head.path.rfind("/v1/", 0) == 0;
    if (!keyed_api) {
      return false;
    }
    const Principal who = auth_->Resolve(head, NowUnix());
    return !who.authenticated() || (v2 && !RestApi::Authorize(head.method, head.path, who).ok());
  };
  listener_ = std::make_unique<http::HttpListener>(
      std::move(options),
      [this](http::HttpRequest request, std::shared_ptr<http::ResponseSink> sink) {
        Handle(std::move(request), std::move(sink));
      });
  return listener_->Open(config_.host, config_.port);
}

Status Manager::Bootstrap() {
  // The session-signing key and the registration token live in the database (hashed where
  // only a comparison is needed), so a restarted manager keeps its sessions and agents.
  auto session_key = store_->GetSetting("session_key");
  if (!session_key.ok()) {
    return session_key.status();
  }
  if (session_key->empty()) {
    *session_key = RandomHex(32);
    TANDEM_RETURN_IF_ERROR(store_->SetSetting("session_key", *session_key));
  }
  const std::string token_path = config_.data_dir + "/token";
  std::string token = config_.token;
  auto token_hash = store_->GetSetting("registration_token_hash");
  if (!token_hash.ok()) {
    return token_hash.status();
  }
  if (!token.empty()) {
    *token_hash = HashSecret("registration", token);
    TANDEM_RETURN_IF_ERROR(store_->SetSetting("registration_token_hash", *token_hash));
  } else if (token_hash->empty()) {
    token = RandomHex(16);
    *token_hash = HashSecret("registration", token);
    TANDEM_RETURN_IF_ERROR(store_->SetSetting("registration_token_hash", *token_hash));
  }
  if (!token.empty()) {
    TANDEM_RETURN_IF_ERROR(WriteSecretFile(token_path, token));
    TLOG_INFO("manager: the registration token is in {}", token_path);
  }

  auto users = store_->List(Table::kUsers);
  if (!users.ok()) {
    return users.status();
  }
  if (users->empty()) {
    std::string password = config_.bootstrap_password;
    if (password.empty()) {
      password = RandomHex(12);
      const std::string path = config_.data_dir + "/initial_admin_password";
      TANDEM_RETURN_IF_ERROR(WriteSecretFile(path, password));
      TLOG_INFO("manager: created user 'admin'; its password is in {}", path);
    } else {
      TLOG_INFO("manager: created user 'admin' with the --bootstrap-password");
    }
    json admin = {{"username", "admin"},
                  {"full_name", "Administrator"},
                  {"is_admin", true},
                  {"password_hash", HashPassword(password)}};
    TANDEM_RETURN_IF_ERROR(store_->Create(Table::kUsers, "admin", std::move(admin)).status());
  }
  auto builtin = store_->FindByName(Table::kInferenceBackends, kBuiltinBackend);
  if (!builtin.ok()) {
    return builtin.status();
  }
  if (!builtin->has_value()) {
    TANDEM_RETURN_IF_ERROR(
        store_->Create(Table::kInferenceBackends, kBuiltinBackend, BuiltinBackend()).status());
  } else if ((*builtin)->data != BuiltinBackend()) {
    TANDEM_RETURN_IF_ERROR(
        store_->Update(Table::kInferenceBackends, (*builtin)->id, kBuiltinBackend, BuiltinBackend())
            .status());
  }
  auth_ = std::make_unique<AuthCache>(*store_);
  return auth_->Start(*session_key, *token_hash);
}

void Manager::Run() {
  controller_ = std::thread([this] { ControllerLoop(); });
  listener_->Run(config_.num_io_threads);
  Stop();
  if (controller_.joinable()) {
    controller_.join();
  }
}

void Manager::Stop() {
  bool first;
  {
    std::lock_guard lock(stop_mutex_);
    first = !stopping_;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (gateway_) {
    gateway_->Stop();
  }
  // /v2 watches and followed logs end with their last chunk.
  open_streams_.EndAll();
  // The gateway's streams now end with an error event: let those be written before the
  // listener drops every connection (bounded: a client that does not read is not waited for).
  if (first && gateway_ && !gateway_->WaitForResponses(kGatewayDrainS)) {
    TLOG_WARN("manager: stopping with gateway responses still being written after {} s",
              kGatewayDrainS);
  }
  // The ended streams' last bytes are written before the connections are dropped (bounded the
  // same way).
  if (listener_ && first) {
    listener_->StopWhenIdle(kGatewayDrainS);
  } else if (listener_) {
    listener_->Stop();
  }
}

void Manager::ControllerLoop() {
  Controller controller(*store_, config_);
  std::unique_lock lock(stop_mutex_);
  while (!stopping_) {
    lock.unlock();
    controller.RunOnce(NowUnix());
    lock.lock();
    stop_cv_.wait_for(
        lock, std::chrono::milliseconds(static_cast<int64_t>(config_.controller_interval_s * 1000)),
        [this] { return stopping_; });
  }
}

std::optional<std::pair<int, std::string>> Manager::CrossSiteRefusal(
    const http::HttpRequest& request, bool form_ok) {
  const std::string& method = request.method;
  if (method == "GET" || method == "HEAD" || method == "OPTIONS") {
    return std::nullopt;
  }
  const std::string_view cookie = request.Header("cookie");
  if (cookie.find(kSessionCookie) == std::string_view::npos) {
    return std::nullopt;
  }
  // A browser sends the cookie with any request to this host, a form or a fetch of another
  // site's page included (SameSite=Lax does not stop a same-site one); it also sends Origin
  // (else Referer) naming the page's origin. Only this server's own pages may write.
  std::string_view origin = request.Header("origin");
  std::string_view source = "Origin";
  if (origin.empty() || origin == "null") {
    origin = request.Header("referer");
    source = "Referer";
  }
  const std::string_view host = request.Header("host");
  // scheme://host[:port] of the origin, compared by its authority with Host.
  std::string_view authority = origin;
  if (const size_t scheme = authority.find("://"); scheme != std::string_view::npos) {
    authority.remove_prefix(scheme + 3);
  } else {
    authority = {};
  }
  authority = authority.substr(0, authority.find('/'));
  if (origin.empty()) {
    return std::pair{403, std::string("a write with the session cookie needs an Origin or Referer "
                                      "header (cross-site request protection); API clients "
                                      "send 'Authorization: Bearer <api key>' instead")};
  }
  if (authority.empty() || host.empty() || authority != host) {
    return std::pair{
        403,
        fmt::format("cross-site write refused: the {} header names '{}', not this server "
                    "('{}'); API clients send 'Authorization: Bearer <api key>' instead",
                    source, std::string(origin.substr(0, 200)), std::string(host.substr(0, 200)))};
  }
  const std::string_view type = request.Header("content-type");
  const bool json = type.find("application/json") != std::string_view::npos;
  const bool form = type.find("application/x-www-form-urlencoded") != std::string_view::npos;
  if (!request.body.empty() && !json && !(form_ok && form)) {
    return std::pair{415,
                     fmt::format("a write with the session cookie must send "
                                 "'Content-Type: application/json'{}; found '{}'",
                                 form_ok ? " (or a form)" : "", std::string(type.substr(0, 200)))};
  }
  return std::nullopt;
}

void Manager::HandleLogin(const http::HttpRequest& request, http::ResponseSink& sink) {
  // Form fields (as GPUStack's login form posts them) or a JSON object.
  std::string username;
  std::string password;
  if (request.Header("content-type").find("json") != std::string_view::npos) {
    auto body = ParseJsonBody(request.body);
    if (!body.ok()) {
      return SendError(sink, body.status());
    }
    auto u = StringField(*body, "username");
    auto pw = StringField(*body, "password");
    if (!u.ok()) {
      return SendError(sink, u.status());
    }
    if (!pw.ok()) {
      return SendError(sink, pw.status());
    }
    username = *u;
    password = *pw;
  } else {
    auto fields = ParseQueryString(request.body);
    if (!fields.ok()) {
      return SendError(sink, fields.status());
    }
    for (const auto& [k, v] : *fields) {
      if (k == "username") {
        username = v;
      }
      if (k == "password") {
        password = v;
      }
    }
  }
  if (username.empty() || password.empty()) {
    return SendError(sink, InvalidArgument("username and password are required"));
  }
  const double now = MonotonicSeconds();
  if (const int64_t wait_s = login_limiter_.RetryAfterS(username, request.peer_address, now)) {
    sink.AddResponseHeader("Retry-After", std::to_string(wait_s));
    return sink.SendResponse(
        429, "application/json",
        ManagementErrorBody(429, fmt::format("too many failed logins for this user or from this "
                                             "address; retry in {} s",
                                             wait_s)));
  }
  auto user = store_->FindByName(Table::kUsers, username);
  if (!user.ok()) {
    return SendError(sink, user.status());
  }
  // Verify against a dummy hash when the user does not exist: the same time either way.
  static const std::string kDummy = HashPassword("dummy-password");
  const bool ok =
      VerifyPassword(password,
                     user->has_value() ? (*user)->data.value("password_hash", "") : kDummy) &&
      user->has_value();
  if (!ok) {
    login_limiter_.Failed(username, request.peer_address, now);
    return SendError(sink, Status(StatusCode::kUnauthenticated, "wrong username or password"));
  }
  login_limiter_.Succeeded(username, request.peer_address);
  const std::string cookie =
      SignSession((*user)->id, (*user)->data.value("session_epoch", int64_t{0}),
                  NowUnix() + kSessionLifetimeS, auth_->session_key());
  sink.SendResponseWithHeaders(
      200, "application/json", RestApi::PublicView(Table::kUsers, **user).dump(),
      {{"Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}",
                                  kSessionCookie, cookie, kSessionLifetimeS)}});
}

std::string Manager::MetricsText() {
  std::string out;
  const auto by_state = [&](Table table, const char* metric, const char* help,
                            std::vector<std::string> states) {
    std::map<std::string, int64_t> counts;
    for (const std::string& s : states) {
      counts[s] = 0;
    }
    auto rows = store_->List(table);
    if (rows.ok()) {
      for (const store::Record& r : *rows) {
        ++counts[r.data.value("state", "unknown")];
      }
    }
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", metric, help, metric);
    for (const auto& [state, n] : counts) {
      out += fmt::format("{}{{state=\"{}\"}} {}\n", metric, state, n);
    }
  };
  by_state(Table::kWorkers, "tandem_manager_workers", "Workers by state.",
           {"ready", "not_ready", "unreachable", "maintenance"});
  by_state(Table::kModelInstances, "tandem_manager_model_instances", "Model instances by state.",
           {"PENDING", "SCHEDULED", "INITIALIZING", "STARTING", "RUNNING", "ERROR"});
  if (gateway_) {
    out += gateway_->MetricsText();
  }
  return out;
}

void Manager::Handle(http::HttpRequest request, std::shared_ptr<http::ResponseSink> sink) {
  // A handler's unexpected exception answers this request with a 500; the manager stays up.
  try {
    Route(request, sink);
  } catch (const std::exception& e) {
    TLOG_ERROR("manager: {} {} failed: {}", request.method, request.path, e.what());
    if (request.path.rfind("/v1/", 0) == 0) {
      SendOpenAiError(*sink, 500, std::string("internal error: ") + e.what());
    } else {
      SendError(*sink, Internal(std::string("internal error: ") + e.what()));
    }
  }
}

void Manager::Route(const http::HttpRequest& request,
                    const std::shared_ptr<http::ResponseSink>& sink) {
  const std::string& path = request.path;
  const bool read = request.method == "GET" || request.method == "HEAD";
  if ((path == "/healthz" || path == "/readyz" || path == "/version" || path == "/metrics") &&
      !read) {
    return SendMethodNotAllowed(*sink, request.method, path, "GET, HEAD");
  }
  if (path == "/healthz" || path == "/readyz") {
    sink->SendResponse(200, "text/plain", "ok");
    return;
  }
  if (path == "/version") {
    SendJson(*sink, {{"version", config_.version}});
    return;
  }
  if (path == "/metrics") {
    sink->SendResponse(200, "text/plain; version=0.0.4", MetricsText());
    return;
  }
  if (auto refused = CrossSiteRefusal(request, /*form_ok=*/path == "/auth/login")) {
    return sink->SendResponse(refused->first, "application/json",
                              ManagementErrorBody(refused->first, refused->second));
  }
  if (path == "/auth/login") {
    if (request.method != "POST") {
      return SendMethodNotAllowed(*sink, request.method, path, "POST");
    }
    return HandleLogin(request, *sink);
  }
  if (path == "/auth/logout") {
    if (request.method != "POST") {  // a link or an image must not log anyone out
      return SendMethodNotAllowed(*sink, request.method, path, "POST");
    }
    // The session's user gets a new epoch: this cookie and every other of theirs stop working.
    const Principal who = auth_->Resolve(request, NowUnix());
    if (who.kind == Principal::Kind::kUser) {
      auto bumped = store_->Modify(Table::kUsers, who.user_id, [](json& d) {
        d["session_epoch"] = d.value("session_epoch", int64_t{0}) + 1;
        return Status::Ok();
      });
      if (!bumped.ok()) {
        return SendError(*sink, bumped.status());
      }
    }
    sink->SendResponseWithHeaders(
        200, "application/json", "{}",
        {{"Set-Cookie",
          fmt::format("{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0", kSessionCookie)}});
    return;
  }
  const Principal who = auth_->Resolve(request, NowUnix());
  if (path == "/auth/session") {
    // Who this browser is logged in as, without a 401 when nobody is (the console asks at
    // start; a 401 would be an error in its console).
    if (!read) {
      return SendMethodNotAllowed(*sink, request.method, path, "GET, HEAD");
    }
    if (who.kind != Principal::Kind::kUser) {
      return SendJson(*sink, {{"user", nullptr}});
    }
    return SendJson(
        *sink,
        {{"user", {{"id", who.user_id}, {"username", who.username}, {"is_admin", who.is_admin}}}});
  }
  if (path == "/v2" || path.rfind("/v2/", 0) == 0) {
    if (!who.authenticated()) {
      return SendError(*sink, Status(StatusCode::kUnauthenticated,
                                     who.failure.empty() ? "authentication required: log in at "
                                                           "/auth/login or send "
                                                           "'Authorization: Bearer <api key>'"
                                                         : who.failure));
    }
    if (path == "/v2/dashboard") {
      if (!read) {
        return SendMethodNotAllowed(*sink, request.method, path, "GET, HEAD");
      }
      // Traffic of every deployment: for users and management keys, not inference keys or
      // workers.
      if (who.kind == Principal::Kind::kWorker || !who.HasScope("management")) {
        return SendError(*sink, Status(StatusCode::kPermissionDenied,
                                       "the dashboard needs a login or a key with scope "
                                       "management"));
      }
      return SendJson(*sink, gateway_->Dashboard(static_cast<double>(NowUnix())));
    }
    RestApi api(*store_, config_, listener_->io_context(), open_streams_);
    api.Handle(request, who, sink);
    return;
  }
  if (path.rfind("/v1/", 0) == 0) {
    gateway_->Handle(request, who, sink);
    return;
  }
  // The console (the web UI): its files, and index.html for its routes (/deployments, …), never
  // for the paths of an API, whatever follows them: a client there gets a JSON 404, not a page.
  if (!IsApiPath(path)) {
    if (ui_.Serve(request, *sink, /*fallback_to_index=*/true)) {
      return;
    }
    if (ui_.Serves(path, /*fallback_to_index=*/true)) {
      return SendMethodNotAllowed(*sink, request.method, path, "GET, HEAD");
    }
  }
  SendError(*sink, NotFound(fmt::format("no route {} {}", request.method, path)));
}

}  // namespace tandem::cluster::manager
