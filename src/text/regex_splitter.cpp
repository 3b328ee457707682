#include "text/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdint>

#include "core/logging.h"

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

namespace {

// Per-thread resources of a match: a JIT stack of up to 8 MiB (the default 32 KiB overflows on
// long runs of one character class) and a match context with a step limit that grows with the
// subject, so a long input is not refused merely for being long.
struct MatchResources {
  MatchResources() {
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(32 << 10, 8 << 20, nullptr);
    if (context != nullptr && jit_stack != nullptr) {
      pcre2_jit_stack_assign(context, nullptr, jit_stack);
    }
  }
  ~MatchResources() {
    if (jit_stack != nullptr) pcre2_jit_stack_free(jit_stack);
    if (context != nullptr) pcre2_match_context_free(context);
  }
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
};

// The fallback when the regex gives up (a resource limit): pieces of at most 256 bytes, cut at
// UTF-8 character boundaries. Tokens then differ from HF's for this text, but the request is
// served and nothing is lost (the pieces still concatenate to the text).
void SplitInChunks(std::string_view text, std::vector<std::string_view>* pieces) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = std::min(text.size(), start + 256);
    while (end < text.size() && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) ++end;
    pieces->push_back(text.substr(start, end - start));
    start = end;
  }
}

}  // namespace

void RegexSplitter::Split(std::string_view text, std::vector<std::string_view>* pieces) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(Code(code_), nullptr));
  thread_local MatchResources resources;
  if (resources.context != nullptr) {
    // PCRE2's default is 10 million steps; a pattern such as Qwen's \s*[\r\n]+ backtracks
    // once over a whole run of spaces before the next alternative matches it (linear overall).
    const uint64_t limit = 10'000'000 + 64 * static_cast<uint64_t>(text.size());
    pcre2_set_match_limit(resources.context,
                          static_cast<uint32_t>(std::min<uint64_t>(limit, UINT32_MAX)));
  }
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t gap_start = 0;
  size_t offset = 0;
  while (offset < text.size()) {
    int rc = pcre2_match(Code(code_), subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.get(),
                         resources.context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // Past even the larger JIT stack; the interpreter keeps its backtracking state on the heap.
      rc = pcre2_match(Code(code_), subject, text.size(), offset, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                       match.get(), resources.context);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc <= 0) {
      TLOG_WARN(
          "pre-tokenizer regex gave up at byte {} of {} ({}); the rest is split in 256-byte "
          "pieces",
          offset, text.size(), ErrorText(rc));
      if (offset > gap_start) pieces->push_back(text.substr(gap_start, offset - gap_start));
      SplitInChunks(text.substr(offset), pieces);
      return;
    }
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
