#include "http/chunked.h"

#include <fmt/format.h>

namespace tandem::http {

std::string HttpChunk(std::string_view data) {
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

std::string HttpLastChunk() { return "0\r\n\r\n"; }

}  // namespace tandem::http
