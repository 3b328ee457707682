// Reference: Unicode 15 §3.9 Table 3-7 (well-formed UTF-8 byte sequences: core/utf8.h) and the
// "maximal subpart" replacement practice of §3.9.6, which Python's bytes.decode(errors="replace")
// follows.
#include "text/utf8.h"

#include "core/utf8.h"

namespace tandem::text {

int Utf8SequenceLength(std::string_view bytes) {
  auto [valid, expected] = Utf8ValidPrefix(bytes);
  if (valid == 0) return -1;
  if (valid == expected) return expected;
  if (valid == static_cast<int>(bytes.size())) return 0;  // ran out of bytes: incomplete
  return -1;
}

std::vector<std::string_view> SplitUtf8Chars(std::string_view text) {
  std::vector<std::string_view> chars;
  size_t pos = 0;
  while (pos < text.size()) {
    int len = Utf8SequenceLength(text.substr(pos));
    size_t n = len > 0 ? static_cast<size_t>(len) : 1;
    chars.push_back(text.substr(pos, n));
    pos += n;
  }
  return chars;
}

size_t AppendSanitizedUtf8(std::string_view bytes, bool final, std::string* out) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    auto [valid, expected] = Utf8ValidPrefix(bytes.substr(pos));
    if (valid > 0 && valid == expected) {
      out->append(bytes.substr(pos, valid));
      pos += valid;
    } else if (valid > 0 && pos + valid == bytes.size() && !final) {
      break;  // incomplete tail: wait for more bytes
    } else {
      out->append(kReplacementChar);
      pos += valid > 0 ? valid : 1;  // maximal subpart
    }
  }
  return pos;
}

std::string SanitizeUtf8(std::string_view bytes) {
  std::string out;
  AppendSanitizedUtf8(bytes, /*final=*/true, &out);
  return out;
}

}  // namespace tandem::text
