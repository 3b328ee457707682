#include "structured/grammar_matcher.h"

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

}  // namespace tandem::structured
