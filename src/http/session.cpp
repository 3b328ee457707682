#include "http/session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <mutex>
#include <sstream>

#include "core/clock.h"
#include "core/logging.h"
#include "http/chunked.h"

namespace tandem::http {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using boost::beast::error_code;

namespace {

std::string DefaultErrorBody(int http_status, const std::string& message) {
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    escaped += c;
  }
  return fmt::format(R"({{"error": {{"message": "{}", "code": {}}}}})", escaped, http_status);
}

}  // namespace

// ResponseSink of one exchange: hops every call onto the session's strand. The posted calls
// carry the exchange id by value: the sink may be gone by the time they run.
class SessionSink : public ResponseSink {
 public:
  SessionSink(std::weak_ptr<HttpSession> session, uint64_t exchange_id)
      : session_(std::move(session)), exchange_id_(exchange_id) {}

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
    Post([id = exchange_id_, name = std::move(name), value = std::move(value)](HttpSession& s) mutable {
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
    if (on_disconnect) on_disconnect();
  }
  net::any_io_executor Executor() const override {
    std::shared_ptr<HttpSession> session = session_.lock();
    if (!session) return {};
    return session->stream_.get_executor();
  }
  // Runs the disconnect callback at most once.
  void FireDisconnect() {
    std::function<void()> callback;
    {
      std::lock_guard lock(mutex_);
      disconnected_ = true;
      callback = std::move(on_disconnect_);
      on_disconnect_ = nullptr;
    }
    if (callback) callback();
  }

 private:
  template <typename F>
  void Post(F&& f) {
    std::shared_ptr<HttpSession> session = session_.lock();
    if (!session) return;
    net::post(session->stream_.get_executor(),
              [session, f = std::forward<F>(f)]() mutable { f(*session); });
  }

  std::weak_ptr<HttpSession> session_;
  const uint64_t exchange_id_;
  std::mutex mutex_;
  std::function<void()> on_disconnect_;
  bool disconnected_ = false;  // FireDisconnect ran
};

HttpSession::HttpSession(net::ip::tcp::socket socket, const SessionOptions& options,
                         const RequestHandler& handler)
    : stream_(std::move(socket), options.tls ? options.tls->Current() : nullptr),
      idle_timer_(stream_.get_executor()),
      options_(options),
      handler_(handler) {}

HttpSession::~HttpSession() {
  if (sink_ && exchange_active_) sink_->FireDisconnect();
}

void HttpSession::Run() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->StartIdleTimer();  // also bounds the TLS handshake
    self->stream_.HandshakeThen([self](error_code ec) { self->OnHandshake(ec); });
  });
}

void HttpSession::OnHandshake(error_code ec) {
  if (closed_) return;
  if (ec) {
    // A plain-HTTP client on the TLS port, a client refusing the certificate, a missing client
    // certificate, a scanner: nothing to answer in HTTP.
    error_code peer_ec;
    const auto peer = stream_.socket().remote_endpoint(peer_ec);
    TLOG_DEBUG("TLS handshake with {} failed: {}",
               peer_ec ? std::string("?") : peer.address().to_string(), ec.message());
    if (ec.category() == net::error::get_ssl_category() &&
        ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_HTTP_REQUEST) {
      // Plain HTTP on the HTTPS port: say so in plain HTTP (as nginx does), then close.
      const std::string body =
          options_.error_body
              ? options_.error_body(400, "plain HTTP request sent to an HTTPS port: use https://")
              : DefaultErrorBody(400, "plain HTTP request sent to an HTTPS port: use https://");
      auto response = std::make_shared<std::string>(fmt::format(
          "HTTP/1.1 400 Bad Request\r\nServer: tandem\r\nContent-Type: application/json\r\n"
          "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
          body.size(), body));
      net::async_write(stream_.socket(), net::buffer(*response),
                       [self = shared_from_this(), response](error_code, size_t) { self->Close(); });
      return;
    }
    Close();
    return;
  }
  DoRead();
}

void HttpSession::DoRead() {
  if (closed_ || reading_) return;
  parser_.emplace();
  parser_->body_limit(options_.max_body_bytes);
  reading_ = true;
  bhttp::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](error_code ec, size_t) { self->OnRead(ec); });
}

void HttpSession::OnRead(error_code ec) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    std::optional<std::pair<int, std::string>> error;
    if (ec == bhttp::error::body_limit) {
      error.emplace(413, fmt::format("request body is larger than the limit of {} bytes",
                                     options_.max_body_bytes));
    } else if (ec.category() == make_error_code(bhttp::error::bad_target).category() &&
               ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      error.emplace(400, "malformed HTTP request: " + ec.message());
    }
    if (exchange_active_ && error) {
      // Bytes that do not parse after a complete request (e.g. a body sent without
      // Content-Length, which HTTP/1.1 reads as an empty body plus garbage): answer the
      // request in flight first, then the error, then close.
      pending_error_ = std::move(error);
      pinned_ = shared_from_this();  // no read is pending now: keep the session alive
    } else if (exchange_active_) {
      // The connection is gone: the client can no longer be answered.
      if (sink_) sink_->FireDisconnect();
      Close();
    } else if (error) {
      SendErrorAndClose(error->first, error->second);
    } else {
      Close();
    }
    return;
  }
  auto message = parser_->release();
  HttpRequest request;
  request.method = std::string(message.method_string());
  const std::string target(message.target());
  const size_t question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string::npos) request.query = target.substr(question + 1);
  request.body = std::move(message.body());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  error_code peer_ec;
  const auto peer = stream_.socket().remote_endpoint(peer_ec);
  if (!peer_ec) request.peer_address = peer.address().to_string();
  request.arrival_time_s = MonotonicSeconds();
  const bool keep_alive = message.keep_alive();
  if (exchange_active_) {
    pending_request_.emplace(std::move(request), keep_alive);  // dispatched when active ends
    // No read is pending until then, and the handler holds the session only weakly: without
    // this the session (and the request in flight) would end here.
    pinned_ = shared_from_this();
    return;
  }
  Dispatch(std::move(request), keep_alive);
}

void HttpSession::Dispatch(HttpRequest request, bool keep_alive) {
  idle_timer_.cancel();
  ++exchange_id_;
  exchange_active_ = true;
  response_started_ = response_complete_ = false;
  response_status_ = 0;
  extra_headers_.clear();
  keep_alive_ = keep_alive;
  active_request_.method = request.method;
  active_request_.path = request.path;
  active_request_.arrival_time_s = request.arrival_time_s;
  sink_ = std::make_shared<SessionSink>(weak_from_this(), exchange_id_);
  DoRead();  // watch for disconnects (and a pipelined next request)
  handler_(std::move(request), sink_);
}

void HttpSession::StartIdleTimer() {
  idle_timer_.expires_after(std::chrono::seconds(options_.keep_alive_timeout_s));
  idle_timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec && !self->exchange_active_) self->Close();
  });
}

void HttpSession::Close() {
  pinned_.reset();  // every caller holds the session (a handler's or a locked weak pointer)
  if (closed_) return;
  closed_ = true;
  idle_timer_.cancel();
  error_code ignored;
  // Under TLS no close_notify is sent: every response is framed (Content-Length or chunked),
  // so a client cannot mistake the close for a truncation.
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

void HttpSession::DoSendResponse(
    uint64_t exchange_id, int http_status, const std::string& content_type, std::string body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  if (exchange_id != exchange_id_ || !exchange_active_ || response_started_) return;
  bhttp::response<bhttp::string_body> response{static_cast<bhttp::status>(http_status), 11};
  response.set(bhttp::field::server, "tandem");
  response.set(bhttp::field::content_type, content_type);
  for (const auto& [name, value] : extra_headers_) response.set(name, value);
  for (const auto& [name, value] : headers) response.set(name, value);
  response.keep_alive(keep_alive_);
  response.body() = std::move(body);
  response.prepare_payload();
  // 304 and 204 carry no content and no Content-Length (RFC 9110 §8.6, §15.3.5).
  if (http_status == 304 || http_status == 204) response.erase(bhttp::field::content_length);
  std::ostringstream out;
  // A HEAD answer carries the GET's headers (Content-Length included) and no body (RFC 9110
  // §9.3.2).
  if (active_request_.method == "HEAD") {
    out << response.base();
  } else {
    out << response;
  }
  response_started_ = response_complete_ = true;
  response_status_ = http_status;
  QueueWrite(out.str());
}

void HttpSession::DoStartStream(uint64_t exchange_id, const std::string& content_type,
                                int http_status) {
  if (exchange_id != exchange_id_ || !exchange_active_ || response_started_) return;
  bhttp::response<bhttp::empty_body> response{static_cast<bhttp::status>(http_status), 11};
  response.set(bhttp::field::server, "tandem");
  response.set(bhttp::field::content_type, content_type);
  response.set(bhttp::field::cache_control, "no-cache");
  for (const auto& [name, value] : extra_headers_) response.set(name, value);
  response.keep_alive(keep_alive_);
  response.chunked(true);
  std::ostringstream out;
  out << response.base();
  response_started_ = true;
  response_status_ = http_status;
  QueueWrite(out.str());
}

void HttpSession::DoStreamData(uint64_t exchange_id, std::string data) {
  if (exchange_id != exchange_id_ || !response_started_ || response_complete_) return;
  if (data.empty()) return;  // an empty chunk would end the body
  QueueWrite(HttpChunk(data));
}

void HttpSession::DoEndStream(uint64_t exchange_id) {
  if (exchange_id != exchange_id_ || !response_started_ || response_complete_) return;
  response_complete_ = true;
  QueueWrite(HttpLastChunk());
}

void HttpSession::SendErrorAndClose(int http_status, const std::string& message) {
  ++exchange_id_;
  exchange_active_ = true;
  response_started_ = response_complete_ = false;
  keep_alive_ = false;
  active_request_ = HttpRequest{};
  sink_.reset();
  DoSendResponse(exchange_id_, http_status, "application/json",
                 options_.error_body ? options_.error_body(http_status, message)
                                     : DefaultErrorBody(http_status, message));
}

void HttpSession::QueueWrite(std::string bytes) {
  if (closed_) return;
  write_queue_.push_back(std::move(bytes));
  if (!writing_) DoWrite();
}

void HttpSession::DoWrite() {
  if (write_queue_.empty()) {
    writing_ = false;
    if (exchange_active_ && response_complete_) FinishExchange();
    return;
  }
  writing_ = true;
  net::async_write(stream_, net::buffer(write_queue_.front()),
                   [self = shared_from_this()](error_code ec, size_t) {
                     self->write_queue_.pop_front();
                     if (ec) {
                       if (self->sink_) self->sink_->FireDisconnect();
                       self->Close();
                       return;
                     }
                     self->DoWrite();
                   });
}

void HttpSession::FinishExchange() {
  pinned_.reset();  // the caller (a write handler) holds the session
  exchange_active_ = false;
  const std::string& path = active_request_.path;
  if (!path.empty() && !options_.disable_access_log_for_endpoints.count(path)) {
    TLOG_INFO("{} {} {} {:.1f} ms", active_request_.method, path, response_status_,
              (MonotonicSeconds() - active_request_.arrival_time_s) * 1e3);
  }
  sink_.reset();
  if (pending_error_) {
    auto [status, message] = std::move(*pending_error_);
    pending_error_.reset();
    SendErrorAndClose(status, message);
    return;
  }
  if (!keep_alive_) {
    Close();
    return;
  }
  if (pending_request_) {
    auto [request, keep_alive] = std::move(*pending_request_);
    pending_request_.reset();
    Dispatch(std::move(request), keep_alive);
    return;
  }
  DoRead();  // no-op when the watch read is still pending
  StartIdleTimer();
}

}  // namespace tandem::http
