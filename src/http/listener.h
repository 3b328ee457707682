// HttpListener: accepts HTTP/1.1 connections on host:port (Boost.Beast, async) and runs each as
// an HttpSession whose requests go to one RequestHandler. Knows nothing of what it serves:
// the OpenAI server and the cluster manager both run on it.
// Usage: HttpListener l(options, handler); TANDEM_RETURN_IF_ERROR(l.Open(host, port)); l.Run(n);
// Stop() from any thread makes Run() return.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <string>

#include "core/status.h"
#include "http/session.h"
#include "http/types.h"

namespace tandem::http {

class HttpListener {
 public:
  // `options` and `handler` are copied; the handler runs on the I/O threads.
  HttpListener(SessionOptions options, RequestHandler handler);
  ~HttpListener();

  // Binds and listens. `reuse_port` sets SO_REUSEPORT (several processes on one port).
  // `host` is an IP address or a name (resolved: its first IPv4 address, else its first).
  // Errors: kInvalidArgument when `host` is neither; kUnavailable naming host:port
  // when the address cannot be bound (e.g. the port is in use).
  Status Open(const std::string& host, uint16_t port, bool reuse_port = false);

  // The bound port (the picked one when `port` was 0). Valid after Open().
  uint16_t port() const { return bound_port_; }

  // The io_context the sessions run on (for timers and clients of the embedding server).
  boost::asio::io_context& io_context() { return io_context_; }

  // Serves until Stop() on `num_threads` threads (the caller's is one of them); returns once
  // all have ended.
  void Run(int32_t num_threads);

  // Makes Run() return; open connections are dropped. Thread-safe; idempotent.
  void Stop();

  // Stops accepting (a request on a kept-alive connection gets 503), then Stop()s once no
  // exchange is in progress (every response in flight written or its client gone). Past
  // `max_wait_s` (0: at once) the exchanges still open are answered — 503 with `abort_message`,
  // or their stream's last piece (SessionOptions::shutdown_stream_tail) — never cut silently,
  // and given kAbortWriteSeconds to be written. Thread-safe; returns at once.
  void StopWhenIdle(double max_wait_s,
                    std::string abort_message = "the server is shutting down; retry the request");

  static constexpr double kAbortWriteSeconds = 2.0;

 private:
  void DoAccept();
  void OnAcceptError(const boost::system::error_code& ec);
  void RefuseConnection(boost::asio::ip::tcp::socket socket);
  void PollIdle(double deadline_s, bool aborted);

  SessionOptions options_;
  RequestHandler handler_;
  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_backoff_;  // after a failed accept (EMFILE, ...)
  int64_t accept_failures_ = 0;               // since the last accept that succeeded
  boost::asio::steady_timer drain_timer_;     // StopWhenIdle's polling
  std::string abort_message_;                 // StopWhenIdle's
  double last_accept_warning_s_ = -1e9;       // MonotonicSeconds() of the last warning
  int64_t refused_connections_ = 0;           // past max_connections, since the last warning
  double last_refusal_warning_s_ = -1e9;
  uint16_t bound_port_ = 0;
};

}  // namespace tandem::http
