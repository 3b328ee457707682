#include "http/framing.h"

#include <vector>

#include "http/types.h"

namespace tandem::http {

std::optional<FramingError> CheckRequestFraming(std::optional<std::string_view> transfer_encoding,
                                                std::optional<std::string_view> content_length) {
  if (!transfer_encoding) return std::nullopt;
  if (content_length) {
    return FramingError{400, "Transfer-Encoding and Content-Length in one request (RFC 9112 "
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

std::string OriginFormTarget(std::string_view target) {
  size_t scheme_end = std::string_view::npos;
  if (target.size() >= 7 && EqualsIgnoreCase(target.substr(0, 7), "http://")) {
    scheme_end = 7;
  } else if (target.size() >= 8 && EqualsIgnoreCase(target.substr(0, 8), "https://")) {
    scheme_end = 8;
  }
  if (scheme_end == std::string_view::npos) return std::string(target);
  const size_t path = target.find_first_of("/?", scheme_end);
  if (path == std::string_view::npos) return "/";
  // "http://h?x" has an empty path, which is "/" in origin form (RFC 9112 §3.2.1).
  return (target[path] == '?' ? "/" : "") + std::string(target.substr(path));
}

bool ExpectsContinue(std::string_view expect) {
  const std::vector<std::string_view> values = SplitHeaderList(expect);
  return values.size() == 1 && EqualsIgnoreCase(values.front(), "100-continue");
}

}  // namespace tandem::http
