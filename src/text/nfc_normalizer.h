// Unicode NFC normalization (canonical decomposition, then canonical composition), the
// "NFC" normalizer of HF tokenizer.json files (Qwen2/2.5/3).
// Reference: Unicode Standard Annex #15; implemented by utf8proc (Debian libutf8proc-dev).
#pragma once

#include <string>
#include <string_view>

namespace tandem::text {

// NFC form of `text`, which must be valid UTF-8 (callers sanitize first). Text whose code
// points are all below U+0300 is already NFC and is returned unchanged without calling into
// utf8proc. Thread-safe.
std::string NormalizeNfc(std::string_view text);

}  // namespace tandem::text
