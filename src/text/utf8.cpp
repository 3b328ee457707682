// Reference: Unicode 15 §3.9 Table 3-7 (well-formed UTF-8 byte sequences) and the "maximal
// subpart" replacement practice of §3.9.6, which Python's bytes.decode(errors="replace") follows.
#include "text/utf8.h"

#include <cstdint>

namespace tandem::text {
namespace {

// Expected total length and the valid range of the second byte for a lead byte; 0 = invalid.
struct LeadInfo {
  int length;
  uint8_t second_lo;
  uint8_t second_hi;
};

LeadInfo Lead(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b >= 0xE1 && b <= 0xEC) return {3, 0x80, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xEE && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Number of leading bytes of `bytes` that form a valid (possibly incomplete) prefix, and the
// full expected length. Returns {valid_prefix_len, expected_len}.
std::pair<int, int> ValidPrefix(std::string_view bytes) {
  LeadInfo lead = Lead(static_cast<uint8_t>(bytes[0]));
  if (lead.length == 0) return {0, 0};
  if (lead.length == 1) return {1, 1};
  int n = 1;
  for (; n < lead.length && n < static_cast<int>(bytes.size()); ++n) {
    uint8_t b = static_cast<uint8_t>(bytes[n]);
    uint8_t lo = n == 1 ? lead.second_lo : 0x80;
    uint8_t hi = n == 1 ? lead.second_hi : 0xBF;
    if (b < lo || b > hi) break;
  }
  return {n, lead.length};
}

}  // namespace

int Utf8SequenceLength(std::string_view bytes) {
  auto [valid, expected] = ValidPrefix(bytes);
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
    auto [valid, expected] = ValidPrefix(bytes.substr(pos));
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
