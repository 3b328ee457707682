#include "text/nfc_normalizer.h"

#include <utf8proc.h>

#include <cstdlib>

#include "core/check.h"

namespace tandem::text {

std::string NormalizeNfc(std::string_view text) {
  // U+0300 (the first combining mark) is 0xCC 0x80 in UTF-8: a text without a byte >= 0xCC has
  // only code points below it, none of which decomposes or composes with a neighbour.
  bool maybe_changes = false;
  for (char c : text) {
    if (static_cast<uint8_t>(c) >= 0xCC) {
      maybe_changes = true;
      break;
    }
  }
  if (!maybe_changes) return std::string(text);
  utf8proc_uint8_t* normalized = nullptr;
  utf8proc_ssize_t size =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &normalized,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  TANDEM_CHECK(size >= 0) << "utf8proc NFC failed on valid UTF-8 (" << utf8proc_errmsg(size)
                          << "); callers must sanitize text first";
  std::string out(reinterpret_cast<const char*>(normalized), static_cast<size_t>(size));
  std::free(normalized);
  return out;
}

}  // namespace tandem::text
