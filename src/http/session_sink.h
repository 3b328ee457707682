// SessionSink: the ResponseSink an HttpSession hands its handler for one exchange (private to
// session.cpp, which includes it; a friend of HttpSession).
#pragma once

#include <boost/asio/post.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "http/session.h"
#include "http/types.h"

namespace tandem::http {

// ResponseSink of one exchange: hops every call onto the session's strand. The posted calls
// carry the exchange id by value: the sink may be gone by the time they run.
class SessionSink : public ResponseSink {
 public:
  SessionSink(std::weak_ptr<HttpSession> session, uint64_t exchange_id,
              std::shared_ptr<ListenerAlive> listener_alive)
      : session_(std::move(session)),
        exchange_id_(exchange_id),
        listener_alive_(std::move(listener_alive)) {}

  void SendResponse(int http_status, std::string content_type, std::string body) override {
    Post([id = exchange_id_, http_status, content_type,
          body = std::move(body)](HttpSession& s) mutable {
      s.DoSendResponse(id, http_status, content_type, std::move(body));
    });
  }
  void SendResponseWithHeaders(int http_status, std::string content_type, std::string body,
                               std::vector<std::pair<std::string, std::string>> headers) override {
    Post([id = exchange_id_, http_status, content_type, body = std::move(body),
          headers = std::move(headers)](HttpSession& s) mutable {
      s.DoSendResponse(id, http_status, content_type, std::move(body), headers);
    });
  }
  void StartStream(std::string content_type, int http_status) override {
    Post([id = exchange_id_, content_type, http_status](HttpSession& s) {
      s.DoStartStream(id, content_type, http_status);
    });
  }
  void SendStreamData(std::string data) override {
    Post([id = exchange_id_, data = std::move(data)](HttpSession& s) mutable {
      s.DoStreamData(id, std::move(data));
    });
  }
  void AddResponseHeader(std::string name, std::string value) override {
    Post([id = exchange_id_, name = std::move(name),
          value = std::move(value)](HttpSession& s) mutable {
      if (id == s.exchange_id_ && !s.response_started_) {
        s.extra_headers_.emplace_back(std::move(name), std::move(value));
      }
    });
  }
  void EndStream() override {
    Post([id = exchange_id_](HttpSession& s) { s.DoEndStream(id); });
  }
  void SetOnDisconnect(std::function<void()> on_disconnect) override {
    {
      std::lock_guard lock(mutex_);
      if (!disconnected_) {
        on_disconnect_ = std::move(on_disconnect);
        return;
      }
    }
    // The client went away before the handler got here (it ran on the preprocessing pool):
    // cancel at once, as if it had left a moment later.
    if (on_disconnect) {
      on_disconnect();
    }
  }
  boost::asio::any_io_executor Executor() const override {
    std::unique_lock<std::recursive_mutex> lock;
    if (!ListenerStands(lock)) {
      return {};
    }
    std::shared_ptr<HttpSession> session = session_.lock();
    if (!session) {
      return {};
    }
    return session->stream_.get_executor();
  }
  // The flag FireDisconnect sets, for HttpRequest::client_gone.
  std::shared_ptr<const std::atomic<bool>> client_gone() const { return client_gone_; }
  // Runs the disconnect callback at most once.
  void FireDisconnect() {
    std::function<void()> callback;
    {
      std::lock_guard lock(mutex_);
      disconnected_ = true;
      client_gone_->store(true);
      callback = std::move(on_disconnect_);
      on_disconnect_ = nullptr;
    }
    if (callback) {
      callback();
    }
  }

 private:
  // Locks the listener's ListenerAlive into `lock` and says whether it still stands (true when
  // the session runs without one).
  bool ListenerStands(std::unique_lock<std::recursive_mutex>& lock) const {
    if (!listener_alive_) {
      return true;
    }
    lock = std::unique_lock(listener_alive_->mutex);
    return listener_alive_->alive;
  }

  template <typename F>
  void Post(F&& f) {
    // `lock` outlives `session`: should this be the session's last reference, it is dropped
    // while its io_context still stands.
    std::unique_lock<std::recursive_mutex> lock;
    if (!ListenerStands(lock)) {
      return;
    }
    std::shared_ptr<HttpSession> session = session_.lock();
    if (!session) {
      return;
    }
    boost::asio::post(session->stream_.get_executor(),
                      [session, f = std::forward<F>(f)]() mutable { f(*session); });
  }

  std::weak_ptr<HttpSession> session_;
  const uint64_t exchange_id_;
  const std::shared_ptr<ListenerAlive> listener_alive_;
  std::mutex mutex_;
  std::function<void()> on_disconnect_;
  bool disconnected_ = false;  // FireDisconnect ran
  const std::shared_ptr<std::atomic<bool>> client_gone_ = std::make_shared<std::atomic<bool>>();
};

}  // namespace tandem::http
