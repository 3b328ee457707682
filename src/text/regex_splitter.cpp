#include "text/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/check.h"

namespace tandem::text {
namespace {

pcre2_code* Code(void* code) { return static_cast<pcre2_code*>(code); }

std::string ErrorText(int error_code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(error_code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

// Frees the match data of one Split call.
struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

}  // namespace

Result<std::unique_ptr<RegexSplitter>> RegexSplitter::Create(const std::string& pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    return InvalidArgument("pre-tokenizer regex '" + pattern + "' does not compile at offset " +
                           std::to_string(error_offset) + ": " + ErrorText(error_code));
  }
  // JIT is an optimisation: without it (e.g. an unsupported CPU) matching still works.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return std::unique_ptr<RegexSplitter>(new RegexSplitter(code, pattern));
}

RegexSplitter::~RegexSplitter() { pcre2_code_free(Code(code_)); }

void RegexSplitter::Split(std::string_view text, std::vector<std::string_view>* pieces) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(Code(code_), nullptr));
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t gap_start = 0;
  size_t offset = 0;
  while (offset < text.size()) {
    int rc = pcre2_match(Code(code_), subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.get(),
                         nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // The JIT's default 32 KiB stack ran out (very long runs); the interpreter keeps its
      // backtracking state on the heap.
      rc = pcre2_match(Code(code_), subject, text.size(), offset, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                       match.get(), nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    TANDEM_CHECK(rc > 0) << "pre-tokenizer regex '" << pattern_ << "' failed: " << ErrorText(rc);
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    size_t start = ovector[0];
    size_t end = ovector[1];
    if (end == start) {
      // An empty match splits nothing; step over one character.
      offset = start + 1;
      while (offset < text.size() && (static_cast<uint8_t>(text[offset]) & 0xC0) == 0x80) {
        ++offset;
      }
      continue;
    }
    if (start > gap_start) pieces->push_back(text.substr(gap_start, start - gap_start));
    pieces->push_back(text.substr(start, end - start));
    gap_start = offset = end;
  }
  if (gap_start < text.size()) pieces->push_back(text.substr(gap_start));
}

}  // namespace tandem::text
