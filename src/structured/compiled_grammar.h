// CompiledGrammar: a grammar's automaton bound to a vocabulary, with the per-position token
// masks that make each step's mask cheap.
//
// For a position (an automaton state with byte edges) the vocabulary splits three ways by one
// walk of the sorted vocabulary from the stack {state, bottom}: tokens the position accepts
// whatever called its rule (the walk consumed them without popping below the position);
// tokens it rejects whatever the context (the walk died without popping below); and uncertain
// tokens, whose walk popped below the position with bytes left — only the sequence's real
// stack can tell. A step's mask is then the OR of its stacks' accepted sets plus the uncertain
// tokens its stacks accept (checked one by one), plus the end tokens when the text may end.
// Positions are built on first use and kept for the grammar's life.
//
// Reference: XGrammar's adaptive token mask cache (context-independent vs context-dependent
// tokens), Dong et al. 2024, §3.1.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "structured/automaton.h"
#include "structured/grammar_matcher.h"
#include "structured/token_vocabulary.h"

namespace tandem::structured {

class CompiledGrammar {
 public:
  CompiledGrammar(std::shared_ptr<const Automaton> automaton,
                  std::shared_ptr<const TokenVocabulary> vocabulary);

  // A matcher at the start of the grammar.
  std::unique_ptr<GrammarMatcher> NewMatcher() const;

  // Sets in `bitmask` ([BitmaskWords(vocab_size)] words, cleared first) the tokens that may
  // come next after `matcher`'s text; `end_token_ids` (EOS, stop token ids) are set when the
  // text may end. When nothing at all may come (a dead end the grammar allows, e.g. an empty
  // character class), the end tokens are set so that the sequence can finish.
  // Thread: one caller per matcher; positions are shared under a lock.
  void FillNextTokenBitmask(GrammarMatcher& matcher, std::span<const int32_t> end_token_ids,
                            std::span<uint32_t> bitmask) const;

  // Token ids the matcher would accept next, for tests: the set bits of the bitmask.
  std::vector<int32_t> AllowedTokens(GrammarMatcher& matcher,
                                     std::span<const int32_t> end_token_ids) const;

  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  const Automaton& automaton() const { return *automaton_; }
  // Bytes held: the automaton and the kept position masks.
  size_t memory_bytes() const;
  // Positions whose masks are kept (diagnostics, tests).
  int32_t num_positions_built() const;

  // Memory bound of one grammar's kept position masks. A mask is a bitmask of the vocabulary
  // (19 KB at 150k tokens) plus its uncertain tokens, so a grammar with thousands of positions
  // (a string of maxLength 10000) would otherwise keep hundreds of MB per worker.
  static constexpr size_t kMaxCachedMaskBytes = 48u << 20;

 private:
  struct PositionMask {
    std::vector<uint32_t> accepted;      // [BitmaskWords(vocab)]
    std::vector<int32_t> uncertain;      // token ids, sorted by their bytes
    std::vector<int32_t> uncertain_lcp;  // [k]: common prefix of uncertain[k] and [k-1]
  };
  // The state's mask: kept once built, while the grammar's kept masks stay within
  // kMaxCachedMaskBytes; past that it is rebuilt at every use (slower, bounded memory).
  std::shared_ptr<const PositionMask> Position(int32_t state) const;
  std::unique_ptr<PositionMask> BuildPosition(int32_t state) const;

  std::shared_ptr<const Automaton> automaton_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const PositionMask>> positions_;  // [num_states], lazily
  mutable size_t cached_mask_bytes_ = 0;
};

}  // namespace tandem::structured
