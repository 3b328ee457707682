// The body both tokenizer targets share: the first input byte picks Encode (even) or Decode
// (odd); the rest is the text, or little-endian int32 ids for Decode.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace tandem::fuzz {

// Decode(random ids) must give valid UTF-8 (invalid bytes become U+FFFD) and never crash on ids
// outside the vocabulary (negative, or past vocab_size). Encode(text) must give ids inside
// the vocabulary; when `round_trips(text)`, Decode(Encode(text)) must give `text` back.
template <typename RoundTrips>
void FuzzTokenizer(const text::Tokenizer& tok, const uint8_t* data, size_t size,
                   RoundTrips round_trips) {
  if (size == 0) return;
  const bool decode = (data[0] & 1) != 0;
  ++data;
  --size;
  if (decode) {
    std::vector<int32_t> ids(size / 4);
    for (size_t i = 0; i < ids.size(); ++i) {
      std::memcpy(&ids[i], data + 4 * i, 4);
      // Mostly ids near the vocabulary (in it, or just past it); negative ones stay as they are.
      if (ids[i] >= 0) ids[i] %= tok.vocab_size() + 8;
    }
    for (bool skip : {true, false}) {
      const std::string out = tok.Decode(ids, skip);
      if (text::SanitizeUtf8(out) != out) Fail("Decode gave invalid UTF-8");
    }
    return;
  }
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool add_special : {true, false}) {
    for (int32_t id : tok.Encode(text, add_special)) {
      if (id < 0 || id >= tok.vocab_size()) Fail("Encode gave id " + std::to_string(id));
    }
  }
  if (text::SanitizeUtf8(text) == text && round_trips(text)) {
    const std::string back = tok.Decode(tok.Encode(text, false), false);
    if (back != text) Fail("Decode(Encode(text)) = '" + back + "' for '" + std::string(text) + "'");
  }
}

}  // namespace tandem::fuzz
