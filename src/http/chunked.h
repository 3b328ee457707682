// HTTP/1.1 chunked transfer coding (RFC 9112 §7.1), the writer's half.
#pragma once

#include <string>
#include <string_view>

namespace tandem::http {

// One chunk: "<hex size>\r\n<data>\r\n". `data` must not be empty (that is the last chunk).
std::string HttpChunk(std::string_view data);

// The last chunk, "0\r\n\r\n".
std::string HttpLastChunk();

}  // namespace tandem::http
