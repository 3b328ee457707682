// LogServer: the agent's HTTP endpoint for its instances' logs, which the manager proxies as
// GET /v2/model-instances/{id}/logs (MANAGER.md §3). Listens on --worker-port;
// `GET /instances/{instance name}/logs?run=N&tail=LINES&follow=true` answers the run's log
// (the last LINES lines, all when tail is absent) and, with follow, keeps writing what is
// appended until the client leaves. Only the manager may ask: `Authorization: Bearer` with the
// secret it issued at registration, compared in constant time.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "http/listener.h"

namespace tandem::cluster::agent {

class LogServer {
 public:
  // `log_dir` holds <instance>.<run>.log files.
  explicit LogServer(std::string log_dir) : log_dir_(std::move(log_dir)) {}
  ~LogServer();

  // Binds host:port. Errors: the listener's (kUnavailable naming the address).
  Status Start(const std::string& host, uint16_t port);
  void SetSecret(std::string secret);
  // Stops serving and waits for the followers to end. Thread-safe; idempotent.
  void Stop();

 private:
  void Handle(http::HttpRequest request, std::shared_ptr<http::ResponseSink> sink);

  std::string log_dir_;
  std::mutex mutex_;
  std::mutex stop_mutex_;
  std::string secret_;
  std::unique_ptr<http::HttpListener> listener_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> followers_{0};
};

}  // namespace tandem::cluster::agent
