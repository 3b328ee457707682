#include "http/session.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>

#include "core/clock.h"
#include "core/logging.h"
#include "http/chunked.h"
#include "http/framing.h"
#include "http/session_sink.h"

namespace tandem::http {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using boost::beast::error_code;

HttpSession::HttpSession(net::ip::tcp::socket socket, const SessionOptions& options,
                         const RequestHandler& handler)
    : stream_(std::move(socket), options.tls ? options.tls->Current() : nullptr),
      idle_timer_(stream_.get_executor()),
      stall_timer_(stream_.get_executor()),
      options_(options),
      handler_(handler) {
  error_code peer_ec;
  const auto peer = stream_.socket().remote_endpoint(peer_ec);
  if (!peer_ec) {
    peer_address_ = peer.address().to_string();
  }
  if (options_.open_connections) {
    ++*options_.open_connections;
    counted_ = true;
  }
}

HttpSession::~HttpSession() {
  if (sink_ && exchange_active_) {
    sink_->FireDisconnect();
  }
  ReleaseBodyCharge();
  if (counted_) {
    --*options_.open_connections;
  }
}

void SessionRegistry::Add(std::weak_ptr<HttpSession> session) {
  std::lock_guard lock(mutex_);
  if (sessions_.size() >= 64 && sessions_.size() % 64 == 0) {  // amortized pruning
    std::erase_if(sessions_, [](const std::weak_ptr<HttpSession>& s) { return s.expired(); });
  }
  sessions_.push_back(std::move(session));
}

void SessionRegistry::ForEach(const std::function<void(const std::shared_ptr<HttpSession>&)>& fn) {
  std::vector<std::shared_ptr<HttpSession>> live;
  {
    std::lock_guard lock(mutex_);
    std::erase_if(sessions_, [](const std::weak_ptr<HttpSession>& s) { return s.expired(); });
    for (const auto& weak : sessions_) {
      if (auto session = weak.lock()) {
        live.push_back(std::move(session));
      }
    }
  }
  for (const auto& session : live) {
    fn(session);
  }
}

void HttpSession::AbortForShutdown(const std::string& message) {
  net::dispatch(stream_.get_executor(), [self = shared_from_this(), message] {
    if (self->closed_ || !self->exchange_active_ || self->response_complete_) {
      return;  // nothing open, or the whole response is already queued
    }
    std::shared_ptr<SessionSink> sink = self->sink_;
    if (!self->response_started_) {
      self->SendErrorAndClose(503, message);  // a new exchange id: the handler's calls drop
    } else {
      ++self->exchange_id_;  // the handler's further stream data is dropped
      self->keep_alive_ = false;
      self->response_complete_ = true;
      std::string tail = self->options_.shutdown_stream_tail
                             ? self->options_.shutdown_stream_tail(self->active_request_.path)
                             : std::string();
      if (self->close_delimited_) {
        if (!tail.empty()) {
          self->QueueWrite(std::move(tail));
        } else if (!self->writing_) {
          self->DoWrite();
        }
      } else {
        if (!tail.empty()) {
          self->QueueWrite(HttpChunk(tail));
        }
        self->QueueWrite(HttpLastChunk());
      }
    }
    if (sink) {
      sink->FireDisconnect();  // the handler aborts its engine requests
    }
  });
}

void HttpSession::Run() {
  if (options_.sessions) {
    options_.sessions->Add(weak_from_this());
  }
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->StartIdleTimer();  // also bounds the TLS handshake
    self->stream_.HandshakeThen([self](error_code ec) { self->OnHandshake(ec); });
  });
}

void HttpSession::OnHandshake(error_code ec) {
  if (closed_) {
    return;
  }
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
              ? options_.error_body(400, "plain HTTP request sent to an HTTPS port: use https://",
                                    "")
              : DefaultErrorBody(400, "plain HTTP request sent to an HTTPS port: use https://");
      auto response = std::make_shared<std::string>(fmt::format(
          "HTTP/1.1 400 Bad Request\r\nServer: tandem\r\nContent-Type: application/json\r\n"
          "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
          body.size(), body));
      net::async_write(
          stream_.socket(), net::buffer(*response),
          [self = shared_from_this(), response](error_code, size_t) { self->Close(); });
      return;
    }
    Close();
    return;
  }
  handshake_done_ = true;
  DoRead();
}

void HttpSession::DoRead() {
  if (closed_ || reading_) {
    return;
  }
  ReleaseBodyCharge();  // a request abandoned before its body was whole
  parser_.emplace();
  // No body limit while the header is parsed: Beast would fail a Content-Length over the limit
  // as the header completes, before the route and the key are checked, and a wrong key would
  // read 413 instead of 401. The limit is set once the header is checked (BodyWithinLimit).
  // (An empty optional reads as "over the limit" in this Boost: the largest value instead.)
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  parser_->header_limit(options_.max_header_bytes);
  header_checked_ = false;
  header_bytes_ = 0;
  request_started_s_ = 0;
  body_started_s_ = 0;
  parse_before_read_ = true;
  ReadSome();
}

// The request is read piece by piece — raw reads of the socket, each fed to Beast's parser
// (basic_parser::put) — so that every arrival of bytes restarts the idle timeout (a header
// sent slowly included: Beast's own read_some completes only once the whole header is in),
// the header is checked (framing, Host, Expect) before the body is read, and a header that
// trickles in is cut after header_timeout_s with a 408.
void HttpSession::ReadSome() {
  reading_ = true;
  if (std::exchange(parse_before_read_, false) && buffer_.size() > 0) {
    // Bytes of a pipelined request, read with the previous one: parse them first.
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->OnReadSome({}, 0); });
    return;
  }
  stream_.async_read_some(buffer_.prepare(64 * 1024),
                          [self = shared_from_this()](error_code ec, size_t bytes) {
                            self->buffer_.commit(bytes);
                            self->OnReadSome(ec, bytes);
                          });
}

void HttpSession::OnReadSome(error_code ec, size_t bytes) {
  reading_ = false;
  if (closed_) {
    return;
  }
  if (ec) {
    return OnReadError(ec);  // end of stream, reset, TLS errors: the client left
  }
  if (discard_input_) {  // the body of a request answered without it
    buffer_.consume(buffer_.size());
    return ReadSome();
  }
  if (bytes > 0 && !exchange_active_) {
    StartIdleTimer();  // idle counts from the last byte
  }
  const double now = MonotonicSeconds();
  if (request_started_s_ == 0 && buffer_.size() > 0) {
    request_started_s_ = now;
  }
  // Parse what is buffered: the header first (put stops after it), then the body.
  while (buffer_.size() > 0 && !parser_->is_done()) {
    error_code parse_ec;
    const bool in_header = !parser_->is_header_done();
    const size_t used = parser_->put(buffer_.data(), parse_ec);
    buffer_.consume(used);
    // The header limit counted here, over every byte of the header however the bytes arrived
    // (Beast's header_limit let a header read whole in one buffer through at twice the limit).
    // Bytes buffered while the header is not done are all the header's.
    if (in_header) {
      header_bytes_ += used;
      const size_t seen = header_bytes_ + (parser_->is_header_done() ? 0 : buffer_.size());
      if (seen > options_.max_header_bytes) {
        return OnReadError(bhttp::error::header_limit);
      }
    }
    if (parse_ec == bhttp::error::need_more) {
      if (parser_->is_header_done() && parser_->chunked() &&
          HasBareLineFeed({static_cast<const char*>(buffer_.data().data()), buffer_.size()})) {
        return OnBadRequest(400,
                            "chunked body: a line ends in a bare LF; chunk-size lines, the "
                            "end of chunk data and trailers end in CRLF (RFC 9112 §7.1)");
      }
      break;
    }
    if (parse_ec) {
      return OnReadError(parse_ec);
    }
    if (parser_->is_header_done() && !header_checked_) {
      header_checked_ = true;
      if (auto error = CheckHeader()) {
        return OnBadRequest(error->http_status, error->message);
      }
      if (DispatchedBeforeBody()) {
        return;
      }
      body_started_s_ = now;
    }
    if (parser_->chunked() &&
        !ChargeBody(static_cast<int64_t>(parser_->get().body().size()) - body_charged_)) {
      discard_input_ = true;
      return OnBadRequest(503, BudgetRefusal());
    }
    if (used == 0) {
      break;
    }
  }
  if (!parser_->is_header_done()) {
    if (request_started_s_ > 0 && now - request_started_s_ > options_.header_timeout_s) {
      return OnBadRequest(
          408, fmt::format("request header not complete within {} s", options_.header_timeout_s));
    }
    return ReadSome();
  }
  if (!parser_->is_done()) {
    // The body's deadline grows with what has arrived: a trickle is cut, a slow big body not.
    const double received = static_cast<double>(parser_->get().body().size());
    const double allowed_s =
        options_.body_timeout_s +
        received / static_cast<double>(std::max<int64_t>(1, options_.min_body_bytes_per_s));
    if (!exchange_active_ && body_started_s_ > 0 && now - body_started_s_ > allowed_s) {
      discard_input_ = true;
      return OnBadRequest(
          408, fmt::format("request body not complete within {:.0f} s ({} s, plus 1 s per {} "
                           "bytes received)",
                           allowed_s, options_.body_timeout_s, options_.min_body_bytes_per_s));
    }
    return ReadSome();
  }
  OnRequestRead();
}

std::optional<FramingError> HttpSession::CheckHeader() {
  const auto& header = parser_->get();
  auto joined = [&](bhttp::field name) -> std::optional<std::string> {
    std::optional<std::string> out;
    for (auto [it, end] = header.equal_range(name); it != end; ++it) {
      out = out ? *out + ", " + std::string(it->value()) : std::string(it->value());
    }
    return out;
  };
  const std::optional<std::string> te = joined(bhttp::field::transfer_encoding);
  const std::optional<std::string> cl = joined(bhttp::field::content_length);
  if (auto error = CheckRequestFraming(te, cl)) {
    return error;
  }
  // RFC 9112 §3.2: an HTTP/1.1 request without Host, or any request with two, is a 400.
  const size_t hosts = header.count(bhttp::field::host);
  if (hosts > 1 || (hosts == 0 && header.version() >= 11)) {
    return FramingError{400, hosts > 1 ? "more than one Host header (RFC 9112 §3.2)"
                                       : "HTTP/1.1 request without a Host header (RFC 9112 §3.2)"};
  }
  if (!OriginFormTarget(ToStd(header.target()))) {
    return FramingError{400, "malformed request target '" + std::string(header.target()) +
                                 "': an absolute-form target needs a valid host[:port] after "
                                 "the scheme (RFC 9112 §3.2.2)"};
  }
  return std::nullopt;
}

// A request the handler answers without its body gets that answer at once: it is never
// buffered (a refused key, an unknown path), and curl and others, which wait (1 s) for "100
// Continue" before sending a body over 1 MB, get the answer instead (as uvicorn, which sends
// 100 only when the application reads the body). A body the budget cannot hold is refused.
bool HttpSession::DispatchedBeforeBody() {
  const auto& header = parser_->get();
  if (parser_->is_done()) {
    return false;  // no body
  }
  const bool http10 = header.version() < 11;
  if (!exchange_active_ && options_.answers_without_body) {
    HttpRequest head = RequestHead();
    if (options_.answers_without_body(head)) {
      discard_input_ = true;
      Dispatch(std::move(head), /*keep_alive=*/false, http10);
      return true;
    }
  }
  // The body limit, now that a request answered without its body has been answered.
  const auto length = parser_->content_length();
  if (length && *length > options_.max_body_bytes) {
    OnReadError(bhttp::error::body_limit);
    return true;
  }
  parser_->body_limit(options_.max_body_bytes);  // a chunked body's chunks count against it
  if (exchange_active_) {
    return false;  // pipelined behind an active exchange: read as it comes
  }
  if (length && !ChargeBody(static_cast<int64_t>(*length))) {
    discard_input_ = true;
    OnBadRequest(503, BudgetRefusal());
    return true;
  }
  if (!http10 && ExpectsContinue(ToStd(header[bhttp::field::expect]))) {
    QueueWrite("HTTP/1.1 100 Continue\r\n\r\n");
  }
  return false;
}

bool HttpSession::ChargeBody(int64_t bytes) {
  if (!options_.body_budget || bytes <= 0) {
    return true;
  }
  if (!options_.body_budget->Charge(peer_address_, bytes)) {
    return false;
  }
  body_charged_ += bytes;
  return true;
}

void HttpSession::ReleaseBodyCharge() {
  if (body_charged_ > 0 && options_.body_budget) {
    options_.body_budget->Release(peer_address_, body_charged_);
  }
  body_charged_ = 0;
}

std::string HttpSession::BudgetRefusal() const {
  const BodyBudget& budget = *options_.body_budget;
  return fmt::format(
      "the server holds too many request bytes to take this body now (at most {} MiB in all, {} "
      "MiB per client address, until the requests holding them finish); retry later",
      budget.max_total_bytes() >> 20, budget.max_per_address_bytes() >> 20);
}

void HttpSession::LingerThenClose() {
  discard_input_ = true;
  if (!stream_.is_tls()) {
    // The answer is written: the client sees its end of stream at once (TLS closes with
    // close_notify in Close instead).
    error_code ignored;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  }
  idle_timer_.expires_after(std::chrono::seconds(kLingerSeconds));
  idle_timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec) {
      self->Close();
    }
  });
  if (!reading_) {
    ReadSome();
  }
}

HttpRequest HttpSession::RequestHead() {
  const auto& message = parser_->get();
  HttpRequest request;
  request.method = std::string(message.method_string());
  // Absolute form ("GET http://host/v1/models", RFC 9112 §3.2.2) is served as its origin form
  // (CheckHeader refused a malformed one).
  const std::string target = OriginFormTarget(ToStd(message.target())).value_or("/");
  const size_t question = target.find('?');
  request.path = target.substr(0, question);
  if (question != std::string::npos) {
    request.query = target.substr(question + 1);
  }
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  request.peer_address = peer_address_;
  request.arrival_time_s = MonotonicSeconds();
  return request;
}

void HttpSession::OnBadRequest(int http_status, std::string message) {
  if (exchange_active_) {
    // Bytes that do not parse after a complete request (e.g. a body sent without
    // Content-Length, which HTTP/1.1 reads as an empty body plus garbage): answer the
    // request in flight first, then the error, then close.
    pending_error_.emplace(http_status, std::move(message));
    pinned_ = shared_from_this();  // no read is pending now: keep the session alive
  } else {
    SendErrorAndClose(http_status, message);
  }
}

void HttpSession::OnReadError(error_code ec) {
  if (ec == bhttp::error::body_limit) {
    discard_input_ = true;  // the rest of the body is dropped while the 413 is read
    return OnBadRequest(413, fmt::format("request body is larger than the limit of {} bytes",
                                         options_.max_body_bytes));
  }
  if (ec == bhttp::error::header_limit) {
    return OnBadRequest(431, fmt::format("request header is larger than the limit of {} bytes "
                                         "(request line and header fields together)",
                                         options_.max_header_bytes));
  }
  if (ec.category() == make_error_code(bhttp::error::bad_target).category() &&
      ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
    return OnBadRequest(400, "malformed HTTP request: " + ec.message());
  }
  // The client closed its side. With the whole response queued, let the writes finish: their
  // result says whether it arrived (a client that read it and closed is no abort). Otherwise
  // the client can no longer be answered (as uvicorn, a half-close counts as leaving).
  if (exchange_active_ && response_complete_ && writing_) {
    return;
  }
  if (exchange_active_ && sink_) {
    sink_->FireDisconnect();
  }
  Close();
}

void HttpSession::OnRequestRead() {
  if (options_.draining && options_.draining->load() && !exchange_active_) {
    return SendErrorAndClose(503, "the server is shutting down; retry on another");
  }
  HttpRequest request = RequestHead();
  auto message = parser_->release();
  request.body = std::move(message.body());
  if (body_charged_ > 0) {  // held until the last copy of the request goes
    request.body_charge = options_.body_budget->Hold(peer_address_, body_charged_);
    body_charged_ = 0;
  }
  const bool http10 = message.version() < 11;
  // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing: answer it,
  // then close.
  const bool keep_alive =
      message.keep_alive() && !(http10 && message.count(bhttp::field::transfer_encoding) > 0);
  if (exchange_active_) {
    // Dispatched when the active exchange ends.
    pending_request_.emplace(PendingRequest{std::move(request), keep_alive, http10});
    // No read is pending until then, and the handler holds the session only weakly: without
    // this the session (and the request in flight) would end here.
    pinned_ = shared_from_this();
    return;
  }
  Dispatch(std::move(request), keep_alive, http10);
}

void HttpSession::Dispatch(HttpRequest request, bool keep_alive, bool http10) {
  idle_timer_.cancel();
  http10_ = http10;
  ++exchange_id_;
  SetExchangeActive(true);
  response_started_ = response_complete_ = false;
  close_delimited_ = false;
  response_status_ = 0;
  extra_headers_.clear();
  keep_alive_ = keep_alive;
  active_request_.method = request.method;
  active_request_.path = request.path;
  active_request_.arrival_time_s = request.arrival_time_s;
  sink_ = std::make_shared<SessionSink>(weak_from_this(), exchange_id_, options_.listener_alive);
  request.client_gone = sink_->client_gone();
  DoRead();  // watch for disconnects (and a pipelined next request)
  handler_(std::move(request), sink_);
}

void HttpSession::StartIdleTimer() {
  idle_timer_.expires_after(std::chrono::seconds(options_.keep_alive_timeout_s));
  idle_timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec && !self->exchange_active_) {
      self->Close();
    }
  });
}

void HttpSession::SetExchangeActive(bool active) {
  if (active != exchange_active_ && options_.active_exchanges) {
    *options_.active_exchanges += active ? 1 : -1;
  }
  exchange_active_ = active;
}

void HttpSession::LogAccess(const char* ending) {
  const std::string& path = active_request_.path;
  if (path.empty() || options_.disable_access_log_for_endpoints.count(path)) {
    return;
  }
  // A request the client left before its response began has no status yet: 499, as nginx
  // logs a client that closed the request.
  TLOG_INFO("{} {} {} {:.1f} ms{}", active_request_.method, path,
            response_status_ ? response_status_ : 499,
            (MonotonicSeconds() - active_request_.arrival_time_s) * 1e3, ending);
}

void HttpSession::Close() {
  pinned_.reset();  // every caller holds the session (a handler's or a locked weak pointer)
  if (closed_) {
    return;
  }
  if (exchange_active_) {  // a response not (wholly) written: FinishExchange did not log it
    LogAccess(stall_clock_running_ || QueuedBehindFront() > options_.max_send_buffer_bytes
                  ? " (aborted: the client stopped reading)"
                  : " (aborted: the client went away)");
    SetExchangeActive(false);
  }
  closed_ = true;
  idle_timer_.cancel();
  stall_timer_.cancel();
  if (stream_.is_tls() && handshake_done_ && !writing_) {
    // TLS: close_notify first (RFC 8446 §6.1), so that a client can tell the end of a
    // close-delimited response (an HTTP/1.0 stream) from a cut one. Waiting for the peer's
    // close_notify is bounded; no write may be in flight (a stalled client's is).
    error_code ignored;
    stream_.socket().cancel(ignored);  // the pending watch read: the shutdown reads alone
    idle_timer_.expires_after(std::chrono::seconds(1));
    idle_timer_.async_wait([self = shared_from_this()](error_code) { self->CloseSocket(); });
    stream_.AsyncShutdownThen([self = shared_from_this()](error_code) {
      self->idle_timer_.cancel();
      self->CloseSocket();
    });
    return;
  }
  CloseSocket();
}

void HttpSession::CloseSocket() {
  error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

}  // namespace tandem::http
