// Reference: Unicode 15 §3.9 Table 3-7 (well-formed UTF-8 byte sequences).
#include "core/utf8.h"

#include <cstdint>

namespace tandem {
namespace {

// Expected total length and the valid range of the second byte for a lead byte; 0 = invalid.
struct LeadInfo {
  int length;
  uint8_t second_lo;
  uint8_t second_hi;
};

LeadInfo Lead(uint8_t b) {
  if (b < 0x80) {
    return {1, 0, 0};
  }
  if (b >= 0xC2 && b <= 0xDF) {
    return {2, 0x80, 0xBF};
  }
  if (b == 0xE0) {
    return {3, 0xA0, 0xBF};
  }
  if (b >= 0xE1 && b <= 0xEC) {
    return {3, 0x80, 0xBF};
  }
  if (b == 0xED) {
    return {3, 0x80, 0x9F};
  }
  if (b >= 0xEE && b <= 0xEF) {
    return {3, 0x80, 0xBF};
  }
  if (b == 0xF0) {
    return {4, 0x90, 0xBF};
  }
  if (b >= 0xF1 && b <= 0xF3) {
    return {4, 0x80, 0xBF};
  }
  if (b == 0xF4) {
    return {4, 0x80, 0x8F};
  }
  return {0, 0, 0};
}

}  // namespace

std::pair<int, int> Utf8ValidPrefix(std::string_view bytes) {
  LeadInfo lead = Lead(static_cast<uint8_t>(bytes[0]));
  if (lead.length == 0) {
    return {0, 0};
  }
  if (lead.length == 1) {
    return {1, 1};
  }
  int n = 1;
  for (; n < lead.length && n < static_cast<int>(bytes.size()); ++n) {
    uint8_t b = static_cast<uint8_t>(bytes[n]);
    uint8_t lo = n == 1 ? lead.second_lo : 0x80;
    uint8_t hi = n == 1 ? lead.second_hi : 0xBF;
    if (b < lo || b > hi) {
      break;
    }
  }
  return {n, lead.length};
}

bool IsValidUtf8(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    const auto [valid, expected] = Utf8ValidPrefix(bytes.substr(pos));
    if (valid == 0 || valid != expected) {
      return false;
    }
    pos += static_cast<size_t>(valid);
  }
  return true;
}

}  // namespace tandem
