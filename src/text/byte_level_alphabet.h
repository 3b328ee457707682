// The byte-level alphabet of GPT-2 style BPE: each of the 256 byte values is shown as one
// printable Unicode character, so a vocab piece such as "Ġthe" stands for the bytes " the".
// Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') map to themselves; the other 68
// bytes map, in increasing order, to U+0100, U+0101, ... (so ' ' is 'Ġ' U+0120, '\n' is 'Ċ'
// U+010A).
// Reference: OpenAI GPT-2 encoder.py bytes_to_unicode; HF tokenizers pre_tokenizers/byte_level.rs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tandem::text {

// UTF-8 of the alphabet character that stands for `byte`.
std::string_view ByteLevelCharOf(uint8_t byte);

// The alphabet form of raw `bytes` ("\n" -> "Ċ").
std::string ByteLevelEncode(std::string_view bytes);

// The raw bytes of an alphabet-form `piece` ("Ġthe" -> " the"). A character outside the
// alphabet contributes its own UTF-8 bytes (as HF's ByteLevel decoder does); returns false
// when that happened, true when every character was in the alphabet.
bool ByteLevelDecode(std::string_view piece, std::string* bytes);

}  // namespace tandem::text
