#include "http/types.h"

#include <strings.h>

namespace tandem::http {

std::string_view FindHeader(const std::vector<std::pair<std::string, std::string>>& headers,
                            std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return {};
}

std::string_view HttpRequest::Header(std::string_view name) const {
  return FindHeader(headers, name);
}

}  // namespace tandem::http
