// A client's request id: the body's `request_id` (completions, chat, responses) and the
// X-Request-Id header. Either becomes the suffix of the response id and of the engine's request
// ids, appears in log lines and, with --enable-request-id-headers, is echoed as a response
// header, so it is bounded and printable: a megabyte id would be copied into every chunk of a
// stream, a newline would split a log line or a header.
// Reference: vLLM entrypoints/openai serving_engine.py _base_request_id (takes either, unchecked).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tandem::server {

// The longest request id accepted, in bytes (a UUID is 36; room for a caller's own prefixes).
inline constexpr size_t kMaxRequestIdBytes = 512;

// Whether `id` may be used as a request id: nullopt when it may, else the message of the 400,
// naming `what` ("request_id", "the X-Request-Id header"): longer than kMaxRequestIdBytes, or
// a control character (below 0x20, or 0x7f) with its byte offset. Thread-safe.
std::optional<std::string> CheckRequestId(std::string_view id, std::string_view what);

}  // namespace tandem::server
