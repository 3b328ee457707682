#include "text/tokenizer.h"

#include "text/utf8.h"

namespace tandem::text {

std::string Tokenizer::Decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::string bytes;
  bool strip_pending = decode_strips_leading_space();
  for (int32_t id : ids) {
    // A model may pad its vocab past the tokenizer's (e.g. to a multiple of 64): such ids have
    // no text, as in HF tokenizers.
    if (id < 0 || id >= vocab_size()) continue;
    if (skip_special_tokens && IsSpecial(id)) continue;
    std::string piece = TokenBytes(id);
    if (piece.empty()) continue;
    // HF decoder Strip(content=" ", start=1) acts once on the fused text: only its first byte.
    if (strip_pending && piece[0] == ' ') piece.erase(0, 1);
    strip_pending = false;
    bytes += piece;
  }
  return SanitizeUtf8(bytes);
}

}  // namespace tandem::text
