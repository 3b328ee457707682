#include "http/types.h"

#include <strings.h>

namespace tandem::http {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::vector<std::string_view> SplitHeaderList(std::string_view value) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view item = value.substr(start, end - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

std::string_view FindHeader(const std::vector<std::pair<std::string, std::string>>& headers,
                            std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return {};
}

std::string_view HttpRequest::Header(std::string_view name) const {
  return FindHeader(headers, name);
}

}  // namespace tandem::http
