#include "structured/grammar_matcher.h"

#include <algorithm>
#include <utility>

namespace tandem::structured {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Automaton> automaton)
    : automaton_(std::move(automaton)) {
  const PdaStack start{automaton_->start_state(), kBottomFrame};
  can_end_ = Close(*automaton_, arena_, std::span<const PdaStack>(&start, 1), &stacks_);
}

bool GrammarMatcher::AcceptBytes(std::string_view bytes) {
  if (bytes.empty()) return true;
  std::vector<PdaStack> closed = stacks_;
  bool can_end = can_end_;
  for (unsigned char byte : bytes) {
    Advance(*automaton_, closed, byte, &scratch_a_);
    if (scratch_a_.empty()) return false;
    can_end = Close(*automaton_, arena_, scratch_a_, &closed);
  }
  stacks_ = std::move(closed);
  can_end_ = can_end;
  return true;
}

bool GrammarMatcher::AcceptsFrom(const PdaStack& stack, std::string_view bytes) {
  scratch_b_.assign(1, stack);
  for (size_t i = 0; i < bytes.size(); ++i) {
    Advance(*automaton_, scratch_b_, static_cast<uint8_t>(bytes[i]), &scratch_a_);
    if (scratch_a_.empty()) return false;
    if (i + 1 == bytes.size()) return true;
    Close(*automaton_, arena_, scratch_a_, &scratch_b_);
    if (scratch_b_.empty()) return false;
  }
  return false;  // empty `bytes`: not a token a grammar allows
}

void GrammarMatcher::AcceptTokensFrom(const PdaStack& stack, std::span<const int32_t> ids,
                                      std::span<const int32_t> lcp,
                                      const TokenVocabulary& vocabulary,
                                      std::span<uint32_t> bitmask) {
  if (levels_.empty()) levels_.resize(1);
  levels_[0].assign(1, stack);
  level_read_ok_.assign(1, 1);
  size_t valid = 0;  // levels [0, valid] hold the previous token's prefix
  size_t k = 0;
  while (k < ids.size()) {
    const std::string_view bytes = vocabulary.bytes(ids[k]);
    size_t d = std::min(static_cast<size_t>(lcp[k]), valid);
    while (d < bytes.size() && !levels_[d].empty()) {
      if (levels_.size() < d + 2) {
        levels_.resize(d + 2);
        level_read_ok_.resize(d + 2);
      }
      Advance(*automaton_, levels_[d], static_cast<uint8_t>(bytes[d]), &scratch_a_);
      level_read_ok_[d + 1] = !scratch_a_.empty();
      if (level_read_ok_[d + 1]) {
        Close(*automaton_, arena_, scratch_a_, &levels_[d + 1]);
      } else {
        levels_[d + 1].clear();
      }
      ++d;
    }
    valid = d;
    if (d == bytes.size()) {  // every byte read: accepted iff the last one was
      if (level_read_ok_[d]) SetBit(bitmask, ids[k]);
      ++k;
      continue;
    }
    // Dead after d bytes: so is every following token with the same d-byte prefix.
    ++k;
    while (k < ids.size() && static_cast<size_t>(lcp[k]) >= d) ++k;
  }
}

}  // namespace tandem::structured
