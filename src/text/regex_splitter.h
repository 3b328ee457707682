// RegexSplitter: the Split(pattern, behavior="Isolated") pre-tokenizer of HF tokenizers, on
// PCRE2 (UTF-8, Unicode properties for \s \w \d, JIT-compiled). Every match becomes a piece and
// so does every stretch of text between matches; the pieces concatenate to the input.
// Reference: HF tokenizers pre_tokenizers/split.rs (SplitDelimiterBehavior::Isolated). HF runs
// Oniguruma; the patterns of GPT-2/Llama-3/Qwen use only syntax both engines read alike.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tandem::text {

class RegexSplitter {
 public:
  // Compiles `pattern`. Errors: kInvalidArgument with PCRE2's message and offset.
  static Result<std::unique_ptr<RegexSplitter>> Create(const std::string& pattern);
  ~RegexSplitter();
  RegexSplitter(const RegexSplitter&) = delete;
  RegexSplitter& operator=(const RegexSplitter&) = delete;

  // Appends the pieces of `text` (valid UTF-8; not checked again) to `pieces`; they view `text`.
  // Thread-safe: the compiled pattern is shared, match data is per call.
  void Split(std::string_view text, std::vector<std::string_view>* pieces) const;

 private:
  RegexSplitter(void* code, std::string pattern) : code_(code), pattern_(std::move(pattern)) {}
  void* code_;  // pcre2_code_8*
  std::string pattern_;
};

}  // namespace tandem::text
