// The HTTP exchange as handlers see it, free of Beast types: a parsed request and a
// thread-safe sink for the response (a whole body, or a chunked event stream).
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace tandem::server {

struct HttpRequest {
  std::string method;         // "GET", "POST", ...
  std::string path;           // target without the query string ("/v1/completions")
  std::string body;           // raw bytes (size <= ServerConfig.max_body_bytes)
  std::string authorization;  // the Authorization header, "" when absent
  std::string data_parallel_rank;  // the X-data-parallel-rank header (pins a DP rank), "" = none
  double arrival_time_s = 0;  // MonotonicSeconds() when the request was fully read
};

// Where a handler writes its response. All methods are thread-safe and may be called from
// any thread (e.g. the engine client's receive thread); they never block. Calls after the
// response is complete, or after the client went away, are dropped.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;

  // A whole response: status, Content-Type, body. Completes the exchange.
  virtual void SendResponse(int http_status, std::string content_type, std::string body) = 0;

  // Starts a 200 chunked response (e.g. "text/event-stream"); follow with SendStreamData*,
  // then EndStream.
  virtual void StartStream(std::string content_type) = 0;
  virtual void SendStreamData(std::string data) = 0;
  virtual void EndStream() = 0;

  // `on_disconnect` runs once (on an I/O thread) if the client goes away before the response
  // is complete; at once (on the caller's thread) if it has already gone. Set it before
  // starting work whose cancellation matters.
  virtual void SetOnDisconnect(std::function<void()> on_disconnect) = 0;
};

// Routes one request to a handler; runs on an I/O thread and must not block (long work goes to
// the PreprocessPool).
using RequestHandler = std::function<void(HttpRequest, std::shared_ptr<ResponseSink>)>;

}  // namespace tandem::server
