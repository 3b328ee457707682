#include "text/byte_level_alphabet.h"

#include <array>

#include "text/utf8.h"

namespace tandem::text {
namespace {

bool MapsToItself(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
         (byte >= 0xAE && byte <= 0xFF);
}

std::string EncodeCodePoint(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else {  // the alphabet stays below U+0800: two bytes
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

struct Alphabet {
  std::array<std::string, 256> char_of_byte;
  std::array<int16_t, 0x144> byte_of_code_point;  // -1 = not in the alphabet

  Alphabet() {
    byte_of_code_point.fill(-1);
    uint32_t next_extra = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
      uint32_t cp = MapsToItself(byte) ? static_cast<uint32_t>(byte) : next_extra++;
      char_of_byte[byte] = EncodeCodePoint(cp);
      byte_of_code_point[cp] = static_cast<int16_t>(byte);
    }
  }
};

const Alphabet& GetAlphabet() {
  static const Alphabet alphabet;
  return alphabet;
}

// Code point of one complete UTF-8 character `ch`; -1 when `ch` is not valid.
int64_t CodePointOf(std::string_view ch) {
  auto b = [&](size_t i) { return static_cast<uint8_t>(ch[i]); };
  switch (ch.size()) {
    case 1:
      return b(0) < 0x80 ? b(0) : -1;
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    case 4:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    default:
      return -1;
  }
}

}  // namespace

std::string_view ByteLevelCharOf(uint8_t byte) { return GetAlphabet().char_of_byte[byte]; }

std::string ByteLevelEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += GetAlphabet().char_of_byte[static_cast<uint8_t>(c)];
  return out;
}

bool ByteLevelDecode(std::string_view piece, std::string* bytes) {
  const Alphabet& alphabet = GetAlphabet();
  bool all_in_alphabet = true;
  for (std::string_view ch : SplitUtf8Chars(piece)) {
    int64_t cp = Utf8SequenceLength(ch) > 0 ? CodePointOf(ch) : -1;
    if (cp >= 0 && cp < static_cast<int64_t>(alphabet.byte_of_code_point.size()) &&
        alphabet.byte_of_code_point[cp] >= 0) {
      *bytes += static_cast<char>(alphabet.byte_of_code_point[cp]);
    } else {
      *bytes += ch;
      all_in_alphabet = false;
    }
  }
  return all_in_alphabet;
}

}  // namespace tandem::text
