// Reference: Unicode 15 §3.9 Table 3-7 (well-formed UTF-8 byte sequences).
#include "core/utf8.h"

#include <cstdint>

namespace tandem {
namespace {

// Table 3-7 by lead byte: the bytes [lead_lo, lead_hi] start a sequence of `length` bytes
// whose second byte lies in [second_lo, second_hi] (later ones in [0x80, 0xBF]). A byte in no
// row (0x80..0xC1, 0xF5..0xFF) starts none.
struct LeadRange {
  uint8_t lead_lo, lead_hi;
  int length;
  uint8_t second_lo, second_hi;
};
constexpr LeadRange kLeadRanges[] = {
    {0x00, 0x7F, 1, 0x00, 0x00}, {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF},
    {0xE1, 0xEC, 3, 0x80, 0xBF}, {0xED, 0xED, 3, 0x80, 0x9F}, {0xEE, 0xEF, 3, 0x80, 0xBF},
    {0xF0, 0xF0, 4, 0x90, 0xBF}, {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F},
};

const LeadRange* Lead(uint8_t b) {
  for (const LeadRange& range : kLeadRanges) {
    if (b >= range.lead_lo && b <= range.lead_hi) {
      return &range;
    }
  }
  return nullptr;
}

}  // namespace

std::pair<int, int> Utf8ValidPrefix(std::string_view bytes) {
  const LeadRange* lead = Lead(static_cast<uint8_t>(bytes[0]));
  if (lead == nullptr) {
    return {0, 0};
  }
  int n = 1;
  for (; n < lead->length && n < static_cast<int>(bytes.size()); ++n) {
    const uint8_t b = static_cast<uint8_t>(bytes[n]);
    const uint8_t lo = n == 1 ? lead->second_lo : 0x80;
    const uint8_t hi = n == 1 ? lead->second_hi : 0xBF;
    if (b < lo || b > hi) {
      break;
    }
  }
  return {n, lead->length};
}

bool IsValidUtf8(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (static_cast<uint8_t>(bytes[pos]) < 0x80) {  // ASCII, most text: no table lookup
      ++pos;
      continue;
    }
    const auto [valid, expected] = Utf8ValidPrefix(bytes.substr(pos));
    if (valid == 0 || valid != expected) {
      return false;
    }
    pos += static_cast<size_t>(valid);
  }
  return true;
}

}  // namespace tandem
