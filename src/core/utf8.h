// UTF-8 well-formedness (Unicode 15 §3.9, Table 3-7): the byte-level check shared by the
// tokenizers' text helpers (text/utf8.h) and the modules below text/ that must refuse bytes
// which are not UTF-8 before they reach JSON (ipc paths, flag values).
#pragma once

#include <string_view>
#include <utility>

namespace tandem {

// For the sequence starting at `bytes[0]` (`bytes` non-empty): {how many leading bytes form a
// valid, possibly incomplete, prefix; the full length its lead byte announces}. {0, 0} when
// the lead byte cannot start a sequence; {n, n} when complete and valid.
std::pair<int, int> Utf8ValidPrefix(std::string_view bytes);

// Whether `bytes` is entirely well-formed UTF-8 (no overlongs, surrogates, or code points past
// U+10FFFF; no truncated sequence at the end). An empty string is.
bool IsValidUtf8(std::string_view bytes);

}  // namespace tandem
