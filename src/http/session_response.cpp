// HttpSession's response side: the status line and headers (whole or streamed, HTTP/1.0
// close-delimited), chunks, the write queue with its backpressure, the end of an exchange.
// The read side and the connection's life are session.cpp.
#include <boost/asio/write.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <sstream>
#include <utility>

#include "core/clock.h"
#include "core/logging.h"
#include "http/chunked.h"
#include "http/framing.h"
#include "http/session.h"
#include "http/session_sink.h"

namespace tandem::http {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using boost::beast::error_code;

std::string HttpSession::DefaultErrorBody(int http_status, const std::string& message) {
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') {
      escaped += '\\';
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      continue;
    }
    escaped += c;
  }
  return fmt::format(R"({{"error": {{"message": "{}", "code": {}}}}})", escaped, http_status);
}

void HttpSession::DoSendResponse(uint64_t exchange_id, int http_status,
                                 const std::string& content_type, std::string body,
                                 const std::vector<std::pair<std::string, std::string>>& headers) {
  if (exchange_id != exchange_id_ || !exchange_active_ || response_started_) {
    return;
  }
  bhttp::response<bhttp::string_body> response{static_cast<bhttp::status>(http_status), 11};
  response.set(bhttp::field::server, "tandem");
  response.set(bhttp::field::content_type, content_type);
  for (const auto& [name, value] : extra_headers_) {
    response.set(name, value);
  }
  for (const auto& [name, value] : headers) {
    response.set(name, value);
  }
  response.keep_alive(keep_alive_);
  response.body() = std::move(body);
  response.prepare_payload();
  // 304 and 204 carry no content and no Content-Length (RFC 9110 §8.6, §15.3.5).
  if (http_status == 304 || http_status == 204) {
    response.erase(bhttp::field::content_length);
  }
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
  if (exchange_id != exchange_id_ || !exchange_active_ || response_started_) {
    return;
  }
  bhttp::response<bhttp::empty_body> response{static_cast<bhttp::status>(http_status), 11};
  response.set(bhttp::field::server, "tandem");
  response.set(bhttp::field::content_type, content_type);
  response.set(bhttp::field::cache_control, "no-cache");
  for (const auto& [name, value] : extra_headers_) {
    response.set(name, value);
  }
  if (http10_) {
    // An HTTP/1.0 client cannot read chunked (RFC 9112 §7.1): the body ends with the
    // connection instead.
    keep_alive_ = false;
    close_delimited_ = true;
  }
  response.keep_alive(keep_alive_);
  if (!close_delimited_) {
    response.chunked(true);
  }
  std::ostringstream out;
  out << response.base();
  response_started_ = true;
  // A HEAD answer is the GET's headers without a body (RFC 9110 §9.3.2): complete with them;
  // the handler's stream data is dropped.
  if (active_request_.method == "HEAD") {
    response_complete_ = true;
  }
  response_status_ = http_status;
  QueueWrite(out.str());
}

void HttpSession::DoStreamData(uint64_t exchange_id, std::string data) {
  if (exchange_id != exchange_id_ || !response_started_ || response_complete_) {
    return;
  }
  if (data.empty()) {
    return;  // an empty chunk would end the body
  }
  QueueWrite(close_delimited_ ? std::move(data) : HttpChunk(data));
}

void HttpSession::DoEndStream(uint64_t exchange_id) {
  if (exchange_id != exchange_id_ || !response_started_ || response_complete_) {
    return;
  }
  response_complete_ = true;
  if (!close_delimited_) {
    QueueWrite(HttpLastChunk());
  } else if (!writing_) {
    DoWrite();  // nothing left to write: ends the exchange (and, keep_alive_ false, closes)
  }
}

void HttpSession::SendErrorAndClose(int http_status, const std::string& message) {
  // The path of the request at fault, when its request line was read (a body too large, a
  // framing error), for the error's shape. (Beast refuses a Content-Length past the body limit
  // before it counts the header as done, so this does not ask is_header_done.)
  std::string path;
  if (parser_) {
    const std::string target = OriginFormTarget(ToStd(parser_->get().target())).value_or("");
    path = target.substr(0, target.find('?'));
  }
  ++exchange_id_;
  SetExchangeActive(true);
  response_started_ = response_complete_ = false;
  keep_alive_ = false;
  active_request_ = HttpRequest{};
  sink_.reset();
  DoSendResponse(exchange_id_, http_status, "application/json",
                 options_.error_body ? options_.error_body(http_status, message, path)
                                     : DefaultErrorBody(http_status, message));
}

void HttpSession::QueueWrite(std::string bytes) {
  if (closed_) {
    return;
  }
  queued_bytes_ += bytes.size();
  write_queue_.push_back(std::move(bytes));
  if (!writing_) {
    DoWrite();
  }
  CheckSendBuffer();
}

// Backpressure: a client that stops reading leaves the response queued here once the kernel's
// buffers are full. Past send_buffer_bytes the stall clock runs (DoWrite restarts it at each
// piece written); if it runs out, or the bytes queued behind the piece being written reach
// max_send_buffer_bytes (a producer outrunning the client), the exchange is aborted as a
// disconnect (the handler's on_disconnect aborts the engine requests, freeing their KV blocks)
// and the connection closed.
size_t HttpSession::QueuedBehindFront() const {
  return write_queue_.empty() ? 0 : queued_bytes_ - (write_queue_.front().size() - write_offset_);
}

void HttpSession::CheckSendBuffer() {
  if (closed_) {
    return;
  }
  if (QueuedBehindFront() > options_.max_send_buffer_bytes) {
    return AbortStalledClient(fmt::format("{} bytes queued, the limit", queued_bytes_));
  }
  if (queued_bytes_ <= options_.send_buffer_bytes) {
    if (stall_clock_running_) {
      stall_clock_running_ = false;
      stall_timer_.cancel();
    }
    return;
  }
  if (stall_clock_running_) {
    return;
  }
  stall_clock_running_ = true;
  const uint64_t generation = ++stall_clock_generation_;
  stall_timer_.expires_after(
      std::chrono::milliseconds(static_cast<int64_t>(options_.stalled_client_timeout_s * 1000)));
  stall_timer_.async_wait([self = shared_from_this(), generation](error_code ec) {
    if (ec || !self->stall_clock_running_ || self->closed_ ||
        generation != self->stall_clock_generation_) {
      return;
    }
    self->AbortStalledClient(fmt::format("{} bytes queued, none taken for {} s",
                                         self->queued_bytes_,
                                         self->options_.stalled_client_timeout_s));
  });
}

void HttpSession::AbortStalledClient(const std::string& why) {
  error_code peer_ec;
  const auto peer = stream_.socket().remote_endpoint(peer_ec);
  TLOG_WARN("client {} stopped reading {} {}: {}; aborting the response",
            peer_ec ? std::string("?") : peer.address().to_string(), active_request_.method,
            active_request_.path, why);
  if (options_.on_stalled_client) {
    options_.on_stalled_client();
  }
  if (exchange_active_ && sink_) {
    sink_->FireDisconnect();
  }
  Close();
}

void HttpSession::DoWrite() {
  if (write_queue_.empty()) {
    writing_ = false;
    if (exchange_active_ && response_complete_) {
      FinishExchange();
    }
    return;
  }
  writing_ = true;
  // In pieces: each one taken is progress (the stall clock restarts), so a slow client that
  // reads a big body is told apart from one that stopped.
  constexpr size_t kWritePieceBytes = 256 << 10;
  const std::string& front = write_queue_.front();
  const size_t piece = std::min(front.size() - write_offset_, kWritePieceBytes);
  net::async_write(stream_, net::buffer(front.data() + write_offset_, piece),
                   [self = shared_from_this(), piece](error_code ec, size_t) {
                     self->queued_bytes_ -= piece;
                     self->write_offset_ += piece;
                     if (self->write_offset_ == self->write_queue_.front().size()) {
                       self->write_queue_.pop_front();
                       self->write_offset_ = 0;
                     }
                     if (ec) {
                       if (self->sink_) {
                         self->sink_->FireDisconnect();
                       }
                       self->Close();
                       return;
                     }
                     if (self->stall_clock_running_) {  // progress: the clock starts again
                       self->stall_clock_running_ = false;
                       self->stall_timer_.cancel();
                     }
                     self->CheckSendBuffer();
                     self->DoWrite();
                   });
}

void HttpSession::FinishExchange() {
  pinned_.reset();  // the caller (a write handler) holds the session
  SetExchangeActive(false);
  LogAccess("");
  sink_.reset();
  if (pending_error_) {
    auto [status, message] = std::move(*pending_error_);
    pending_error_.reset();
    SendErrorAndClose(status, message);
    return;
  }
  if (!keep_alive_) {
    if (discard_input_) {
      LingerThenClose();  // answered before its body was read: let the client finish sending
    } else {
      Close();
    }
    return;
  }
  if (pending_request_) {
    PendingRequest pending = std::move(*pending_request_);
    pending_request_.reset();
    Dispatch(std::move(pending.request), pending.keep_alive, pending.http10);
    return;
  }
  DoRead();  // no-op when the watch read is still pending
  StartIdleTimer();
}

}  // namespace tandem::http
