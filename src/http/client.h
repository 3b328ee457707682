// HttpCall: one HTTP/1.1 request from the client side (Boost.Beast), either blocking the calling
// thread (Run) or as a coroutine on an executor of the caller's (RunAsync: the gateway runs it
// on the client session's strand, so a relayed byte costs no thread hop), with the response
// body delivered piece by piece as it arrives (de-chunked), connect and idle timeouts, and
// Cancel() from any thread. Fetch() is the whole-body shortcut.
// Plain http:// only (the manager, agents and instances talk inside the cluster).
// Used by the cluster manager's gateway (streamed proxying) and the agent (API calls, probes).
#pragma once

#include <utility>  // std::exchange, which Boost 1.74's awaitable.hpp uses without including

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tandem::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The parts of an http:// URL. `target` is the path plus query ("/v1/models"; "/" when empty).
struct HttpUrl {
  std::string host;  // a name or an IP address (IPv6 without brackets)
  uint16_t port = 80;
  std::string target = "/";
};

// Parses "http://host[:port][/path][?query]". Errors: kInvalidArgument naming the URL
// (another scheme, no host, a bad port).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

struct ClientRequest {
  std::string method = "GET";
  std::string url;     // http://host:port/path?query
  HeaderList headers;  // sent as given (Host, Content-Length and Connection are set here)
  std::string body;
  double connect_timeout_s = 5;  // resolve + connect
  double idle_timeout_s = 30;    // the longest wait for the next byte, once connected
};

struct ClientResponse {
  int status = 0;
  HeaderList headers;  // names lower-cased
  std::string body;
  // The first header named `name` (any case), "" when absent.
  std::string_view Header(std::string_view name) const;
};

class HttpCall {
 public:
  // Called once with the status and headers (names lower-cased); return false to stop.
  using OnHead = std::function<bool(int status, const HeaderList& headers)>;
  // Called for each piece of the body as it arrives; return false to stop.
  using OnBody = std::function<bool(std::string_view bytes)>;

  explicit HttpCall(ClientRequest request);
  ~HttpCall();

  // Sends the request and delivers the response (call once per HttpCall); returns when the
  // body has ended, a callback returned false (Ok), or on failure. Errors: kInvalidArgument
  // (bad URL), kUnavailable with the reason (cannot connect, timed out, connection lost,
  // malformed response, cancelled).
  // `head_received()` tells a failure before the response started from one after.
  Status Run(const OnHead& on_head, const OnBody& on_body);

  // The same as a coroutine whose socket and timers run on `executor` (a strand when the
  // executor has several threads); the callbacks run there too. Call once per HttpCall, and
  // only one of Run and RunAsync.
  boost::asio::awaitable<Status> RunAsync(boost::asio::any_io_executor executor, OnHead on_head,
                                          OnBody on_body);

  // Makes a running or later Run()/RunAsync() return kUnavailable "cancelled" at once.
  // Thread-safe.
  void Cancel();

  bool head_received() const { return head_received_; }

 private:
  ClientRequest request_;
  boost::asio::io_context io_context_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> head_received_{false};
  std::mutex mutex_;
  std::function<void()> close_;  // closes the stream while Run() is in progress
};

// Sends `request` and returns the whole response (body up to `max_body_bytes`, else
// kUnavailable). Errors as HttpCall::Run.
Result<ClientResponse> Fetch(ClientRequest request, size_t max_body_bytes = 64u << 20);

}  // namespace tandem::http
