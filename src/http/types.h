// The HTTP exchange as handlers see it, free of Beast types (Asio's executor aside): a parsed
// request and a thread-safe sink for the response (a whole body, or a chunked stream).
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tandem::http {

// Whether `a` and `b` are equal ignoring ASCII case (header names, tokens).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The elements of a comma-separated header value (RFC 9110 §5.6.1: Accept-Encoding,
// If-None-Match, Access-Control-Request-Headers), each trimmed of spaces and tabs, empty ones
// dropped. Views into `value`.
std::vector<std::string_view> SplitHeaderList(std::string_view value);

// The value of the first header named `name` (any case) in `headers`, "" when absent.
std::string_view FindHeader(const std::vector<std::pair<std::string, std::string>>& headers,
                            std::string_view name);

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // target without the query string ("/v1/completions"), not decoded
  std::string query;   // after '?', raw ("page=2&perPage=10"); "" when none
  std::string body;    // raw bytes (size <= SessionOptions.max_body_bytes)
  // Every header as received, names lower-cased, in order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string peer_address;   // the client's IP address ("127.0.0.1")
  double arrival_time_s = 0;  // MonotonicSeconds() when the request was fully read
  // Set by the application's router: the request may do what a credential allows (it carried
  // a valid one, or the application asks for none).
  bool authorized = false;
  // Releases the body's bytes from the server's body budget (http/body_budget.h) when the last
  // copy of the request is gone; null when not counted.
  std::shared_ptr<const void> body_charge;
  // Turns true (and stays so) once the client has gone before the response was complete (the
  // sink's disconnect): long work before the first byte — a chat-template render on the
  // preprocessing pool — polls it and stops early. Null when nothing watches the connection.
  std::shared_ptr<const std::atomic<bool>> client_gone;

  // The first header named `name` (any case), "" when absent.
  std::string_view Header(std::string_view name) const;
  // Authorization, "" when absent.
  std::string_view authorization() const { return Header("authorization"); }
};

// Where a handler writes its response. All methods are thread-safe and may be called from
// any thread (e.g. the engine client's receive thread); they never block. Calls after the
// response is complete, or after the client went away, are dropped.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;

  // A whole response: status, Content-Type, body. Completes the exchange.
  virtual void SendResponse(int http_status, std::string content_type, std::string body) = 0;
  // The same with extra headers (e.g. Set-Cookie), each (name, value).
  virtual void SendResponseWithHeaders(
      int http_status, std::string content_type, std::string body,
      std::vector<std::pair<std::string, std::string>> headers) = 0;

  // Starts a chunked response (e.g. "text/event-stream"); follow with SendStreamData*, then
  // EndStream. `http_status` is 200 unless given.
  virtual void StartStream(std::string content_type, int http_status = 200) = 0;
  virtual void SendStreamData(std::string data) = 0;
  virtual void EndStream() = 0;

  // `on_disconnect` runs once (on an I/O thread) if the client goes away before the response
  // is complete; at once (on the caller's thread) if it has already gone. Set it before
  // starting work whose cancellation matters.
  virtual void SetOnDisconnect(std::function<void()> on_disconnect) = 0;

  // Adds a header to the response this exchange sends (whole or streamed); call it before the
  // response starts (later calls are dropped).
  virtual void AddResponseHeader(std::string name, std::string value) = 0;

  // The executor (the session's strand) the sink's calls hop onto; work started on it calls
  // the sink without a thread hop. Empty when the connection has already gone.
  virtual boost::asio::any_io_executor Executor() const = 0;
};

// Routes one request to a handler; runs on an I/O thread and must not block.
using RequestHandler = std::function<void(HttpRequest, std::shared_ptr<ResponseSink>)>;

}  // namespace tandem::http
