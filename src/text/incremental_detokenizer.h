// IncrementalDetokenizer: turns generated token ids, one at a time, into text for streaming.
//
// Invariant: the concatenation of every Push() result and Flush() equals the text the
// generated ids add to the decoded prompt, i.e. Decode(prompt + generated) minus
// Decode(prompt) (the same rules as Tokenizer::Decode: the leading space is stripped only when
// the completion starts the text, e.g. after a prompt of just [BOS]). Output never ends inside
// a UTF-8 sequence: the bytes of a partial character are held until it completes; invalid
// sequences become U+FFFD.
// Reference: vLLM v1 detokenizer (prefix/read offsets); we work on token bytes instead, which
// gives the same text without re-decoding windows of tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace tandem::text {

class IncrementalDetokenizer {
 public:
  // `tokenizer` must outlive this object. `prompt_ids` set the starting state (whether the
  // completion starts the text). Bytes of a character left incomplete at the end of the prompt
  // are not carried over.
  IncrementalDetokenizer(const Tokenizer& tokenizer, const std::vector<int32_t>& prompt_ids,
                         bool skip_special_tokens);

  // Adds one generated token; returns the text completed by it (may be empty).
  std::string Push(int32_t token_id);

  // Ends the stream: returns held bytes of an unfinished character as U+FFFD ("" if none).
  std::string Flush();

 private:
  // Appends the bytes of `token_id` to `pending_bytes_`, applying the skip and strip rules.
  void AppendTokenBytes(int32_t token_id);

  const Tokenizer& tokenizer_;
  bool skip_special_tokens_;
  bool strip_pending_;         // the next non-empty piece loses one leading space
  std::string pending_bytes_;  // start of a UTF-8 character not complete yet
};

}  // namespace tandem::text
