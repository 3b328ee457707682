#include "http/framing.h"

#include <algorithm>
#include <vector>

#include "http/types.h"

namespace tandem::http {

std::optional<FramingError> CheckRequestFraming(std::optional<std::string_view> transfer_encoding,
                                                std::optional<std::string_view> content_length) {
  if (!transfer_encoding) return std::nullopt;
  if (content_length) {
    return FramingError{400,
                        "Transfer-Encoding and Content-Length in one request (RFC 9112 "
                        "§6.3: the length cannot be determined reliably)"};
  }
  const std::vector<std::string_view> codings = SplitHeaderList(*transfer_encoding);
  if (codings.empty() || !EqualsIgnoreCase(codings.back(), "chunked")) {
    return FramingError{400, "Transfer-Encoding '" + std::string(*transfer_encoding) +
                                 "' does not end with chunked (RFC 9112 §6.3: the body "
                                 "length cannot be determined)"};
  }
  if (codings.size() > 1) {
    return FramingError{501, "Transfer-Encoding '" + std::string(*transfer_encoding) +
                                 "': only chunked is implemented; send the body uncompressed"};
  }
  return std::nullopt;
}

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 3986 reg-name: unreserved, pct-encoded ('%' and hex digits, not checked further) and
// sub-delims.
bool IsHostNameChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         std::string_view("-._~%!$&'()*+,;=").find(c) != std::string_view::npos;
}

bool IsValidPort(std::string_view port) {
  if (port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (!IsDigit(c)) return false;
    value = value * 10 + (c - '0');
  }
  return value <= 65535;  // "" is allowed: "host:" has the scheme's default port
}

// host [":" port] of an http(s) URI (RFC 3986 §3.2, without userinfo: RFC 9110 §4.2.4).
bool IsValidAuthority(std::string_view authority) {
  if (authority.empty()) return false;  // RFC 9110 §4.2.1: an empty host is invalid
  if (authority.front() == '[') {       // an IPv6 literal
    const size_t close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    for (char c : authority.substr(1, close - 1)) {
      if (!(IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' ||
            c == '.')) {
        return false;
      }
    }
    const std::string_view rest = authority.substr(close + 1);
    return rest.empty() || (rest.front() == ':' && IsValidPort(rest.substr(1)));
  }
  const size_t colon = authority.rfind(':');
  const std::string_view host = authority.substr(0, colon);
  if (host.empty()) return false;
  for (char c : host) {
    if (!IsHostNameChar(c)) return false;  // '@' (userinfo), '[', ']', ':' included
  }
  return colon == std::string_view::npos || IsValidPort(authority.substr(colon + 1));
}

}  // namespace

std::optional<std::string> OriginFormTarget(std::string_view target) {
  size_t scheme_end = std::string_view::npos;
  if (target.size() >= 7 && EqualsIgnoreCase(target.substr(0, 7), "http://")) {
    scheme_end = 7;
  } else if (target.size() >= 8 && EqualsIgnoreCase(target.substr(0, 8), "https://")) {
    scheme_end = 8;
  }
  if (scheme_end == std::string_view::npos) return std::string(target);
  const size_t path = std::min(target.find_first_of("/?", scheme_end), target.size());
  if (!IsValidAuthority(target.substr(scheme_end, path - scheme_end))) return std::nullopt;
  if (path == target.size()) return "/";
  // "http://h?x" has an empty path, which is "/" in origin form (RFC 9112 §3.2.1).
  return (target[path] == '?' ? "/" : "") + std::string(target.substr(path));
}

bool HasBareLineFeed(std::string_view unparsed) {
  for (size_t i = 0; i < unparsed.size(); ++i) {
    if (unparsed[i] == '\n' && (i == 0 || unparsed[i - 1] != '\r')) return true;
  }
  return false;
}

bool ExpectsContinue(std::string_view expect) {
  const std::vector<std::string_view> values = SplitHeaderList(expect);
  return values.size() == 1 && EqualsIgnoreCase(values.front(), "100-continue");
}

}  // namespace tandem::http
