#include "structured/compiled_grammar.h"

#include <algorithm>

#include "core/check.h"
#include "structured/pda.h"

namespace tandem::structured {

CompiledGrammar::CompiledGrammar(std::shared_ptr<const Automaton> automaton,
                                 std::shared_ptr<const TokenVocabulary> vocabulary)
    : automaton_(std::move(automaton)),
      vocabulary_(std::move(vocabulary)),
      positions_(automaton_->num_states()) {}

std::unique_ptr<GrammarMatcher> CompiledGrammar::NewMatcher() const {
  return std::make_unique<GrammarMatcher>(automaton_);
}

size_t CompiledGrammar::memory_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return automaton_->memory_bytes() + cached_mask_bytes_;
}

int32_t CompiledGrammar::num_positions_built() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int32_t>(std::count_if(positions_.begin(), positions_.end(),
                                            [](const auto& p) { return p != nullptr; }));
}

std::shared_ptr<const CompiledGrammar::PositionMask> CompiledGrammar::Position(
    int32_t state) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (positions_[state]) return positions_[state];
  }
  std::shared_ptr<const PositionMask> built = BuildPosition(state);  // unlocked: can be slow
  const size_t bytes = built->accepted.size() * sizeof(uint32_t) +
                       (built->uncertain.size() + built->uncertain_lcp.size()) * sizeof(int32_t);
  std::lock_guard<std::mutex> lock(mutex_);
  if (positions_[state]) return positions_[state];
  if (cached_mask_bytes_ + bytes > kMaxCachedMaskBytes) return built;  // used once, not kept
  cached_mask_bytes_ += bytes;
  positions_[state] = built;
  return built;
}

// One walk of the sorted vocabulary from {state, bottom}. Level d holds the closed stacks after
// a token's first d bytes; levels are kept while the next token shares the prefix.
std::unique_ptr<CompiledGrammar::PositionMask> CompiledGrammar::BuildPosition(int32_t state) const {
  const TokenVocabulary& vocab = *vocabulary_;
  auto mask = std::make_unique<PositionMask>();
  mask->accepted.assign(BitmaskWords(vocab.vocab_size()), 0);
  FrameArena arena;
  struct Level {
    std::vector<PdaStack> closed;
    bool read_ok = false;    // the raw stacks after this level's last byte were non-empty
    bool uncertain = false;  // some closure up to this level popped below the position
  };
  std::vector<Level> levels(1);
  levels[0].closed.push_back({state, kBottomFrame});
  std::vector<PdaStack> raw;
  const auto ids = vocab.sorted_ids();
  const auto common = vocab.common_prefix();
  size_t valid = 0;  // levels [0, valid] describe the previous token's prefix
  size_t i = 0;
  while (i < ids.size()) {
    const std::string_view bytes = vocab.bytes(ids[i]);
    size_t d = std::min(static_cast<size_t>(common[i]), valid);
    bool pruned = false;
    while (d < bytes.size()) {
      if (levels[d].closed.empty()) {
        pruned = true;
        break;
      }
      if (levels.size() < d + 2) levels.resize(d + 2);
      Advance(*automaton_, levels[d].closed, static_cast<uint8_t>(bytes[d]), &raw);
      Level& next = levels[d + 1];
      next.read_ok = !raw.empty();
      const bool popped = raw.empty() ? false : Close(*automaton_, arena, raw, &next.closed);
      if (raw.empty()) next.closed.clear();
      next.uncertain = levels[d].uncertain || popped;
      ++d;
    }
    if (pruned) {
      // Every token from here with this d-byte prefix (all longer than d) shares the fate.
      const size_t end = vocab.SkipPrefix(i, d);
      if (levels[d].uncertain) {
        for (size_t k = i; k < end; ++k) mask->uncertain.push_back(ids[k]);
      }
      valid = d;
      i = end;
      continue;
    }
    const size_t len = bytes.size();
    if (levels[len].read_ok) {
      SetBit(mask->accepted, ids[i]);
    } else if (levels[len - 1].uncertain) {
      mask->uncertain.push_back(ids[i]);
    }
    valid = len;
    ++i;
  }
  // The uncertain tokens were found in byte order; their common prefixes let the runtime walk
  // them as a trie.
  mask->uncertain_lcp.resize(mask->uncertain.size(), 0);
  for (size_t k = 1; k < mask->uncertain.size(); ++k) {
    const std::string_view a = vocab.bytes(mask->uncertain[k - 1]);
    const std::string_view b = vocab.bytes(mask->uncertain[k]);
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    mask->uncertain_lcp[k] = static_cast<int32_t>(n);
  }
  return mask;
}

void CompiledGrammar::FillNextTokenBitmask(GrammarMatcher& matcher,
                                           std::span<const int32_t> end_token_ids,
                                           std::span<uint32_t> bitmask) const {
  TANDEM_CHECK(bitmask.size() == BitmaskWords(vocabulary_->vocab_size()))
      << "token bitmask has " << bitmask.size() << " words; expected "
      << BitmaskWords(vocabulary_->vocab_size());
  std::fill(bitmask.begin(), bitmask.end(), 0u);
  bool any = false;
  for (const PdaStack& stack : matcher.stacks()) {
    const std::shared_ptr<const PositionMask> kept = Position(stack.state);
    const PositionMask& position = *kept;
    for (size_t w = 0; w < bitmask.size(); ++w) bitmask[w] |= position.accepted[w];
    matcher.AcceptTokensFrom(stack, position.uncertain, position.uncertain_lcp, *vocabulary_,
                             bitmask);
  }
  for (uint32_t word : bitmask) any = any || word != 0;
  if (matcher.CanEnd() || !any) {
    for (int32_t id : end_token_ids) {
      if (id >= 0 && id < vocabulary_->vocab_size()) SetBit(bitmask, id);
    }
  }
}

std::vector<int32_t> CompiledGrammar::AllowedTokens(GrammarMatcher& matcher,
                                                    std::span<const int32_t> end_token_ids) const {
  std::vector<uint32_t> bitmask(BitmaskWords(vocabulary_->vocab_size()));
  FillNextTokenBitmask(matcher, end_token_ids, bitmask);
  std::vector<int32_t> out;
  for (int32_t id = 0; id < vocabulary_->vocab_size(); ++id) {
    if (TestBit(bitmask, id)) out.push_back(id);
  }
  return out;
}

}  // namespace tandem::structured
