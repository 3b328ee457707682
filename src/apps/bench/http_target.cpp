#include "apps/bench/http_target.h"

#include <fmt/format.h>

namespace tandem::apps::bench {

Result<HttpTarget> ParseBaseUrl(const std::string& base_url) {
  constexpr std::string_view kScheme = "http://";
  if (base_url.rfind("https://", 0) == 0) {
    return InvalidArgument(fmt::format(
        "--base-url '{}': https is not supported by the benchmark client; use http://", base_url));
  }
  if (base_url.rfind(kScheme, 0) != 0) {
    return InvalidArgument(fmt::format(
        "--base-url '{}' must start with http:// (e.g. http://127.0.0.1:8000)", base_url));
  }
  std::string rest = base_url.substr(kScheme.size());
  HttpTarget target;
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) target.path_prefix = rest.substr(slash);
  while (!target.path_prefix.empty() && target.path_prefix.back() == '/') {
    target.path_prefix.pop_back();
  }
  target.port = "80";
  if (!authority.empty() && authority.front() == '[') {  // [v6addr]:port
    size_t close = authority.find(']');
    if (close == std::string::npos) {
      return InvalidArgument(fmt::format("--base-url '{}': unterminated '[' in host", base_url));
    }
    target.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      target.port = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string::npos) {
    target.host = authority.substr(0, colon);
    target.port = authority.substr(colon + 1);
  } else {
    target.host = authority;
  }
  if (target.host.empty() || target.port.empty() ||
      target.port.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument(
        fmt::format("--base-url '{}': expected http://host[:port][/prefix]", base_url));
  }
  return target;
}

}  // namespace tandem::apps::bench
