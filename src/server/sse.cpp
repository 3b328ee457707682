#include "server/sse.h"

#include <fmt/format.h>

namespace tandem::server {

std::string SseEvent(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  out += "data: ";
  out += payload;
  out += "\n\n";
  return out;
}

std::string SseDone() { return "data: [DONE]\n\n"; }

std::string HttpChunk(std::string_view data) {
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

std::string HttpLastChunk() { return "0\r\n\r\n"; }

}  // namespace tandem::server
