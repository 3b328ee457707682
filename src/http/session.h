// HttpSession: one keep-alive HTTP/1.1 connection on a strand (no thread per connection).
//
// Invariant: at most one exchange (request → response) is active; while it is, the session
// keeps reading the socket for the next request, so a client that goes away mid-response is
// noticed at once (ResponseSink on_disconnect → the handler aborts its engine requests).
// A request read while one is active waits until the active response is complete.
// Reference: Boost.Beast examples advanced_server (strand per session, async read/write).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <set>

#include "http/body_budget.h"
#include "http/connection.h"
#include "http/framing.h"
#include "http/tls.h"
#include "http/types.h"

namespace tandem::http {

// Whether the listener, and the io_context its sessions' sockets and timers belong to, still
// stands. A response sink called from another thread (an engine's output thread) holds `mutex`
// while it reaches its session, so a session's last reference is never dropped after that
// io_context is gone (HttpListener's destructor clears `alive` under the same lock first).
// Recursive: a session destroyed there may fire its disconnect callback, which may call a sink.
struct ListenerAlive {
  std::recursive_mutex mutex;
  bool alive = true;
};

class HttpSession;

// The live sessions of a listener, so that shutdown can answer the exchanges still open.
class SessionRegistry {
 public:
  void Add(std::weak_ptr<HttpSession> session);
  // Calls `fn` for each live session (forgetting the gone). Thread-safe.
  void ForEach(const std::function<void(const std::shared_ptr<HttpSession>&)>& fn);

 private:
  std::mutex mutex_;
  std::vector<std::weak_ptr<HttpSession>> sessions_;
};

// The limits and hooks a session runs with (the embedding server fills them from its flags).
struct SessionOptions {
  size_t max_body_bytes = 16u << 20;  // larger bodies get 413
  // The request line and header fields together: larger gets 431 (RFC 6585 §5). Beast's default
  // of 8 KiB refused a long X-Request-Id or a few large cookies; uvicorn (vLLM) takes these.
  uint32_t max_header_bytes = 64u << 10;
  int32_t keep_alive_timeout_s = 5;  // idle keep-alive connections close after this
  std::set<std::string> disable_access_log_for_endpoints;  // paths never access-logged
  // The body of an error the session answers itself (malformed request 400, body too large
  // 413, header too large 431): (HTTP status, message, the request's path: "" when its request
  // line was not read) → JSON text, so that a server with two APIs answers each in its own
  // shape. Default: {"error": {"message", "code"}}.
  std::function<std::string(int, const std::string&, const std::string&)> error_body;
  // A request's header must arrive within this many seconds of its first byte (else 408).
  int32_t header_timeout_s = 30;
  // A request's body must arrive within body_timeout_s of its header, plus one second per
  // min_body_bytes_per_s bytes received (else 408): a body trickled a byte at a time is cut,
  // a big one sent at a modest rate is not (Apache mod_reqtimeout's body=…,MinRate=… idea).
  int32_t body_timeout_s = 30;
  int64_t min_body_bytes_per_s = 64 << 10;
  // Request bytes held over all connections and per client address (http/body_budget.h): a
  // body that would pass a cap is refused with 503 before it is read. Null: no cap.
  std::shared_ptr<BodyBudget> body_budget;
  // Open connections over all sessions; HttpListener sets it, and answers a connection past
  // max_connections (> 0) with a 503 and closes it (uvicorn's --limit-concurrency). 0: no cap.
  std::shared_ptr<std::atomic<int64_t>> open_connections;
  int64_t max_connections = 0;
  // Shutdown (HttpListener sets these): while `draining`, a request read on a kept-alive
  // connection gets 503; `sessions` lets the listener answer the exchanges still open when its
  // wait ends. `shutdown_stream_tail` (the embedding server's): the last piece written to a
  // stream cut by shutdown, given the request's path (an SSE error event); null: none.
  std::shared_ptr<std::atomic<bool>> draining;
  std::shared_ptr<SessionRegistry> sessions;
  std::function<std::string(const std::string& path)> shutdown_stream_tail;
  // Backpressure (a client that stops reading a response): past send_buffer_bytes queued the
  // stall clock starts, and restarts at each piece (256 KiB) the client takes; run out
  // (stalled_client_timeout_s without a piece taken), or past max_send_buffer_bytes queued
  // behind the piece being written at any time, the response is aborted as a disconnect. (One
  // body bigger than max_send_buffer_bytes is written whole to a client that reads it.)
  size_t send_buffer_bytes = 1u << 20;
  size_t max_send_buffer_bytes = 16u << 20;
  double stalled_client_timeout_s = 30;
  std::function<void()> on_stalled_client;  // called once per aborted response (metrics)
  // Given a request's head (method, path, query, headers; no body yet): whether the handler
  // answers it without reading its body (no such route, a method not allowed, a refused key).
  // Then the session dispatches it at once with an empty body — and no "100 Continue" to an
  // Expect: 100-continue (RFC 9110 §10.1.1) — and closes the connection after the answer,
  // reading and dropping what the client still sends for at most kLingerSeconds. So a request
  // that will be refused never has its body buffered (issue 31, item 7). Null, or false: the
  // body is read ("100 Continue" first when expected).
  std::function<bool(const HttpRequest& head)> answers_without_body;
  // Exchanges in progress over all sessions (HttpListener::StopWhenIdle); null: not counted.
  std::shared_ptr<std::atomic<int64_t>> active_exchanges;
  // Set by HttpListener (see ListenerAlive); null: the sessions' io_context outlives them.
  std::shared_ptr<ListenerAlive> listener_alive;
  // Set: every connection speaks TLS with the provider's current context (handshake first,
  // within keep_alive_timeout_s). Null: plain HTTP.
  std::shared_ptr<TlsContextProvider> tls;
};

class SessionSink;

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  // How long a connection answered before its body was read keeps reading (and dropping) input.
  static constexpr int kLingerSeconds = 2;

  // `socket` must use a strand executor. `options` and `handler` outlive the session.
  HttpSession(boost::asio::ip::tcp::socket socket, const SessionOptions& options,
              const RequestHandler& handler);
  ~HttpSession();

  // Starts reading requests. Call once, right after construction.
  void Run();

  // Shutdown: an exchange still open is answered now — 503 with `message` when its response
  // has not started, else its stream ends with SessionOptions::shutdown_stream_tail — its
  // handler is told the client is gone (its engine requests are aborted), and the connection
  // closes once that is written. Thread-safe (runs on the session's strand).
  void AbortForShutdown(const std::string& message);

 private:
  friend class SessionSink;
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  static std::string_view ToStd(boost::beast::string_view view) {
    return {view.data(), view.size()};
  }
  // SessionOptions::error_body's default: {"error": {"message", "code"}}.
  static std::string DefaultErrorBody(int http_status, const std::string& message);

  void OnHandshake(boost::beast::error_code ec);
  void DoRead();
  void ReadSome();
  void OnReadSome(boost::beast::error_code ec, size_t bytes);
  // Framing, Host and the request target of the parsed header; an error to answer (and close)
  // or none.
  std::optional<FramingError> CheckHeader();
  // A request whose body is still to come: dispatched at once without it (answers_without_body),
  // or refused (the body budget), true in those cases; else its body's bytes are charged, and
  // "100 Continue" sent when expected.
  bool DispatchedBeforeBody();
  // Charges the body bytes received beyond those charged (a chunked body); false when the
  // budget refuses them.
  bool ChargeBody(int64_t bytes);
  void ReleaseBodyCharge();
  // The 503 message of a body the budget refuses.
  std::string BudgetRefusal() const;
  // Closes after reading and dropping input for at most kLingerSeconds (or until the client
  // closes): a client still sending a body it was answered without then reads the answer
  // instead of a connection reset (RFC 9112 §9.6).
  void LingerThenClose();
  // The request the parser holds, without its body (the header must be done).
  HttpRequest RequestHead();
  void OnReadError(boost::beast::error_code ec);
  void OnBadRequest(int http_status, std::string message);
  void OnRequestRead();
  void Dispatch(HttpRequest request, bool keep_alive, bool http10);
  void StartIdleTimer();
  void Close();
  void CloseSocket();  // the TCP socket, at once (Close: after TLS close_notify)

  // Run on the strand; `exchange_id` drops calls meant for an earlier exchange.
  void DoSendResponse(uint64_t exchange_id, int http_status, const std::string& content_type,
                      std::string body,
                      const std::vector<std::pair<std::string, std::string>>& headers = {});
  void DoStartStream(uint64_t exchange_id, const std::string& content_type, int http_status);
  void DoStreamData(uint64_t exchange_id, std::string data);
  void DoEndStream(uint64_t exchange_id);
  void SendErrorAndClose(int http_status, const std::string& message);

  void QueueWrite(std::string bytes);
  // Bytes queued after the piece being written: what a producer adds while the client lags.
  size_t QueuedBehindFront() const;
  void CheckSendBuffer();
  void AbortStalledClient(const std::string& why);
  void DoWrite();
  void FinishExchange();
  // Sets exchange_active_, keeping SessionOptions::active_exchanges in step.
  void SetExchangeActive(bool active);
  // The access log line of the active exchange ("POST /v1/completions 200 12.3 ms"), `ending`
  // appended; none for disable_access_log_for_endpoints.
  void LogAccess(const char* ending);

  Connection stream_;  // the socket, plain or under TLS
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer stall_timer_;  // backpressure: see SessionOptions
  bool stall_clock_running_ = false;
  uint64_t stall_clock_generation_ = 0;  // a timer that fired as the clock was restarted is stale
  const SessionOptions& options_;
  const RequestHandler& handler_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  bool reading_ = false;
  bool handshake_done_ = false;     // TLS: the handshake succeeded (close_notify may be sent)
  bool header_checked_ = false;     // the current request's header passed CheckHeader
  size_t header_bytes_ = 0;         // of the current request's header, parsed so far
  bool parse_before_read_ = false;  // DoRead: parse buffered bytes before reading more
  // A request was answered before its body was read (DispatchedBeforeContinue): what arrives
  // after its header is dropped unparsed until the connection closes.
  bool discard_input_ = false;
  double request_started_s_ = 0;  // MonotonicSeconds() of its first byte; 0 before
  double body_started_s_ = 0;     // MonotonicSeconds() when its header was done; 0 before
  int64_t body_charged_ = 0;      // bytes of the current request charged to the body budget
  std::string peer_address_;      // the client's IP address
  bool counted_ = false;          // counted in SessionOptions::open_connections
  bool closed_ = false;

  // The active exchange.
  uint64_t exchange_id_ = 0;
  bool exchange_active_ = false;
  bool response_started_ = false;   // a status line was queued
  bool response_complete_ = false;  // the last byte of the response was queued
  bool keep_alive_ = true;
  bool http10_ = false;           // the request was HTTP/1.0: no chunked responses
  bool close_delimited_ = false;  // a stream to an HTTP/1.0 client: its end is the close
  std::vector<std::pair<std::string, std::string>> extra_headers_;  // AddResponseHeader's
  int response_status_ = 0;
  HttpRequest active_request_;
  std::shared_ptr<SessionSink> sink_;
  struct PendingRequest {
    HttpRequest request;
    bool keep_alive = true;
    bool http10 = false;
  };
  std::optional<PendingRequest> pending_request_;  // read while one was active
  // A malformed request read while one was active: (HTTP status, message), sent after it.
  std::optional<std::pair<int, std::string>> pending_error_;
  // Set while a pipelined request or error waits for the active exchange: nothing else keeps
  // the session alive then. Cleared when the exchange finishes or the session closes.
  std::shared_ptr<HttpSession> pinned_;

  std::deque<std::string> write_queue_;
  size_t write_offset_ = 0;  // bytes of write_queue_.front() already written
  size_t queued_bytes_ = 0;  // not yet written, of write_queue_ (the front's rest included)
  bool writing_ = false;
};

}  // namespace tandem::http
