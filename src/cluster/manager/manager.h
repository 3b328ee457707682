// Manager: `tandem manager`, the cluster manager (MANAGER.md). One process: the store, the
// HTTP API on one port (/v2 management, /auth, the /v1 gateway, probes, /metrics) and a
// controller thread (worker liveness, replicas → instances, placement, restart back-off).
// Usage: Manager m(config); TANDEM_RETURN_IF_ERROR(m.Start()); m.Run(); Stop() from any
// thread makes Run() return.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "cluster/manager/auth_cache.h"
#include "cluster/manager/gateway.h"
#include "cluster/manager/login_limiter.h"
#include "cluster/manager/manager_config.h"
#include "cluster/manager/open_streams.h"
#include "cluster/store/store.h"
#include "core/status.h"
#include "http/listener.h"
#include "http/static_files.h"

namespace tandem::cluster::manager {

class Manager {
 public:
  explicit Manager(ManagerConfig config);
  ~Manager();

  // Opens the store (migrating it), bootstraps the admin user, the registration token and the
  // built-in backend, binds the port. Errors: kInvalidArgument (bad config, a database newer
  // than this binary), kUnavailable (database or port).
  Status Start();

  // Serves until Stop(); returns once the I/O and controller threads have ended.
  void Run();
  // Stops: the gateway refuses new requests and ends those in flight (a stream with an error
  // event), their answers are written (at most 5 s), then every connection is dropped and Run()
  // returns. Any thread but the I/O threads (it waits for them); idempotent.
  void Stop();

  uint16_t port() const { return listener_ ? listener_->port() : 0; }
  store::Store& store() { return *store_; }

 private:
  friend class RestApi;
  friend class Controller;
  Status Bootstrap();
  void Handle(http::HttpRequest request, std::shared_ptr<http::ResponseSink> sink);
  void Route(const http::HttpRequest& request, const std::shared_ptr<http::ResponseSink>& sink);
  void HandleLogin(const http::HttpRequest& request, http::ResponseSink& sink);
  // A write (not GET/HEAD/OPTIONS) carrying the session cookie must come from this server's
  // own origin (Origin, else Referer, naming the Host it was sent to), its body JSON:
  // (HTTP status 403/415, message) to answer, or none. `form_ok`: /auth/login, whose form
  // body GPUStack's clients post.
  static std::optional<std::pair<int, std::string>> CrossSiteRefusal(
      const http::HttpRequest& request, bool form_ok);
  void ControllerLoop();
  std::string MetricsText();

  ManagerConfig config_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<AuthCache> auth_;
  LoginLimiter login_limiter_;
  std::unique_ptr<Gateway> gateway_;
  OpenStreams open_streams_;  // /v2 watches and followed logs (ended by Stop)
  std::unique_ptr<http::HttpListener> listener_;
  http::StaticSite ui_;  // the web UI (embedded files)
  std::thread controller_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace tandem::cluster::manager
