// GrammarMatcher: how far one sequence has got through a grammar — the closed set of pushdown
// stacks (structured/pda.h) that the bytes generated so far leave — and the moves over it:
// accept a token's bytes, ask whether the text may end, check a candidate token.
//
// Invariant: stacks() is closed and non-empty unless only the end of text can follow
// (IsTerminated()); a rejected input leaves the matcher unchanged.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "structured/automaton.h"
#include "structured/pda.h"
#include "structured/token_vocabulary.h"

namespace tandem::structured {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const Automaton> automaton);

  // Reads `bytes`; false (and no change) when no sentence of the grammar starts with the text
  // so far followed by them. "" is accepted.
  bool AcceptBytes(std::string_view bytes);
  // The text so far is a whole sentence: an end-of-sequence token may come now.
  bool CanEnd() const { return can_end_; }
  // Nothing but the end may come.
  bool IsTerminated() const { return stacks_.empty(); }

  // True when `bytes` (non-empty) can follow the text so far through `stack`, one of stacks().
  // Interns frames (hence not const); does not change the matcher's position.
  bool AcceptsFrom(const PdaStack& stack, std::string_view bytes);

  // Sets in `bitmask` every token of `ids` that can follow through `stack`. `ids` are sorted
  // by their bytes and lcp[k] is token k's common prefix length with token k-1, so shared
  // prefixes are read once and a dead prefix skips every token under it. Interns frames.
  void AcceptTokensFrom(const PdaStack& stack, std::span<const int32_t> ids,
                        std::span<const int32_t> lcp, const TokenVocabulary& vocabulary,
                        std::span<uint32_t> bitmask);

  std::span<const PdaStack> stacks() const { return stacks_; }
  const Automaton& automaton() const { return *automaton_; }

 private:
  std::shared_ptr<const Automaton> automaton_;
  FrameArena arena_;
  std::vector<PdaStack> stacks_;  // closed
  bool can_end_ = false;
  std::vector<PdaStack> scratch_a_, scratch_b_;
  // AcceptTokensFrom: per prefix length, the closed stacks and whether its last byte was read.
  std::vector<std::vector<PdaStack>> levels_;
  std::vector<uint8_t> level_read_ok_;
};

}  // namespace tandem::structured
