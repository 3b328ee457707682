#include "server/request_id.h"

#include <fmt/format.h>

namespace tandem::server {

std::optional<std::string> CheckRequestId(std::string_view id, std::string_view what) {
  if (id.size() > kMaxRequestIdBytes) {
    return fmt::format("{} is {} bytes long; the limit is {} bytes", what, id.size(),
                       kMaxRequestIdBytes);
  }
  for (size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c < 0x20 || c == 0x7f) {
      return fmt::format(
          "{} holds the control character 0x{:02x} at byte {}; use printable "
          "characters",
          what, c, i);
    }
  }
  return std::nullopt;
}

}  // namespace tandem::server
