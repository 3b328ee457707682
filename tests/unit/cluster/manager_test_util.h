// An in-process Manager on a loopback port with a temporary data directory, and JSON helpers
// over http::Fetch, for the manager's tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "cluster/manager/manager.h"
#include "http/client.h"

namespace tandem::testing {

struct JsonReply {
  int status = 0;
  nlohmann::json body;
  std::string raw;
  std::string set_cookie;
};

class ManagerHarness {
 public:
  explicit ManagerHarness(cluster::manager::ManagerConfig config = {}) {
    char tmpl[] = "/tmp/tandem-manager-XXXXXX";
    dir_ = mkdtemp(tmpl);
    config.host = "127.0.0.1";
    config.port = 0;
    config.data_dir = dir_;
    if (config.bootstrap_password.empty()) config.bootstrap_password = "admin-password";
    if (config.token.empty()) config.token = "registration-token";
    manager_ = std::make_unique<cluster::manager::Manager>(config);
    start_status_ = manager_->Start();
    if (start_status_.ok()) thread_ = std::thread([this] { manager_->Run(); });
  }
  ~ManagerHarness() {
    manager_->Stop();
    if (thread_.joinable()) thread_.join();
    manager_.reset();
    std::filesystem::remove_all(dir_);
  }
  const Status& start_status() const { return start_status_; }
  cluster::manager::Manager& manager() { return *manager_; }
  const std::string& dir() const { return dir_; }
  std::string Url(const std::string& target) const {
    return "http://127.0.0.1:" + std::to_string(manager_->port()) + target;
  }

  // One request; `auth` is "Bearer ..." or "cookie:..." ("" = none).
  JsonReply Call(const std::string& method, const std::string& target, const std::string& body = "",
                 const std::string& auth = "",
                 const std::string& content_type = "application/json") {
    http::ClientRequest request;
    request.method = method;
    request.url = Url(target);
    request.body = body;
    if (!body.empty()) request.headers.emplace_back("Content-Type", content_type);
    if (auth.rfind("cookie:", 0) == 0) {
      request.headers.emplace_back("Cookie", auth.substr(7));
      // What the console's pages send with a write (the manager refuses a cross-site one).
      request.headers.emplace_back("Origin", Url(""));
    } else if (!auth.empty()) {
      request.headers.emplace_back("Authorization", auth);
    }
    auto response = http::Fetch(request);
    JsonReply reply;
    if (!response.ok()) {
      reply.raw = response.status().ToString();
      return reply;
    }
    reply.status = response->status;
    reply.raw = response->body;
    reply.set_cookie = std::string(response->Header("set-cookie"));
    reply.body = nlohmann::json::parse(response->body, nullptr, false);
    return reply;
  }
  JsonReply Json(const std::string& method, const std::string& target, const nlohmann::json& body,
                 const std::string& auth) {
    return Call(method, target, body.dump(), auth);
  }

  // Logs in as admin; returns "cookie:tandem_session=...".
  std::string AdminSession() {
    JsonReply r = Call("POST", "/auth/login", "username=admin&password=admin-password", "",
                       "application/x-www-form-urlencoded");
    EXPECT_EQ(r.status, 200) << r.raw;
    const std::string cookie = r.set_cookie.substr(0, r.set_cookie.find(';'));
    return "cookie:" + cookie;
  }

  // Polls `predicate` every 20 ms until it holds or `timeout_s` passes (then fails the test
  // naming `what`). For events the manager's controller produces on its own thread.
  bool WaitFor(const std::string& what, const std::function<bool()>& predicate,
               double timeout_s = 20) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      if (predicate()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "timed out waiting for " << what;
    return false;
  }

 private:
  std::string dir_;
  std::unique_ptr<cluster::manager::Manager> manager_;
  Status start_status_;
  std::thread thread_;
};

}  // namespace tandem::testing
