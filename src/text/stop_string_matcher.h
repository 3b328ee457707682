// StopStringMatcher: finds the request's stop strings in streamed completion text and decides
// how much of the text may be sent to the client now.
//
// Invariant (include_stop_str_in_output = false): everything returned so far is text that can
// no longer be part of a stop string; the held-back tail is the longest suffix that is a proper
// prefix of some stop string. On a match, the text before the stop string is returned and the
// stream is finished; the stop string and anything after it are dropped.
// With include_stop_str_in_output = true nothing is held back (as in vLLM) and the output ends
// with the stop string.
// Reference: vLLM v1 detokenizer check_stop_strings / output processor. Deviation: when several
// stop strings match in the same chunk, the one that starts earliest wins (vLLM: list order).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::text {

class StopStringMatcher {
 public:
  struct Output {
    std::string text;                         // safe to emit now
    std::optional<std::string> matched_stop;  // the stop string that ended the stream, if any
  };

  // Empty stop strings are ignored.
  explicit StopStringMatcher(std::vector<std::string> stop_strings,
                             bool include_stop_str_in_output = false);

  // Consumes the next chunk of completion text (complete UTF-8). After a match, further calls
  // return empty outputs. `may_stop` false (the chunk is text of the first min_tokens tokens):
  // no stop string may end in it — one that starts in it and ends in a later chunk still
  // matches (vLLM's min_tokens rule: its stop_check_offset).
  Output Push(std::string_view chunk, bool may_stop = true);

  // End of the stream without a match: returns the held-back text.
  std::string Flush();

  bool stopped() const { return stopped_; }

 private:
  // Start of the earliest stop-string match in `text` that ends past byte `min_end` (longest
  // stop on ties), npos when none; sets *stop to the stop string matched.
  size_t FindStop(std::string_view text, const std::string** stop, size_t min_end = 0) const;
  // Length of the longest suffix of `text` that is a proper prefix of a stop string.
  size_t HeldBackLength(std::string_view text) const;

  std::vector<std::string> stop_strings_;
  bool include_stop_str_in_output_;
  size_t max_stop_size_bytes_ = 0;
  std::string held_;          // exclude mode: text not emitted yet
  std::string emitted_tail_;  // include mode: last max_stop_size-1 bytes already emitted
  bool stopped_ = false;
};

}  // namespace tandem::text
