// One blocking HTTP/1.1 exchange over a fresh TCP connection, with the response body handed
// over piece by piece as it arrives (for timing SSE streams). Each call runs its own
// io_context, so any number of threads may call it at once.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "apps/bench/http_target.h"
#include "core/status.h"

namespace tandem::apps::bench {

struct HttpRequestSpec {
  std::string method = "POST";  // "GET" or "POST"
  std::string path;             // e.g. "/v1/completions" (the target's prefix is prepended)
  std::string body;             // JSON; empty for GET
  std::string api_key;          // sent as "Authorization: Bearer <key>" when non-empty
  double idle_timeout_s = 600;  // connect, write and each read must progress within this
};

// Called with every piece of response body, with the monotonic time (MonotonicSeconds) at
// which it was read off the socket.
using BodyPieceFn = std::function<void(std::string_view piece, double arrival_s)>;

// Sends `spec` to `target` and streams the response body into `on_piece`. Returns the HTTP
// status code (any code, 4xx/5xx included) once the body is complete, or Unavailable naming the
// address and the socket error (refused, reset, timed out after idle_timeout_s).
Result<int> HttpExchange(const HttpTarget& target, const HttpRequestSpec& spec,
                         const BodyPieceFn& on_piece);

}  // namespace tandem::apps::bench
