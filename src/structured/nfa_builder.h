// NfaBuilder: one grammar rule's Expr as a Thompson NFA over byte ranges, rule calls and
// epsilons (a character class expanded into its UTF-8 byte-range sequences), and EpsilonClosure
// over such an NFA: the first step of Automaton::Compile, internal to the automaton
// (automaton.cpp runs the subset construction on what is built here). The definitions are in
// nfa_builder.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "structured/grammar.h"

namespace tandem::structured::automaton_detail {

inline constexpr int32_t kMaxNfaStates = 2'000'000;

struct NfaEdge {
  enum class Kind : uint8_t { kEpsilon, kByte, kCall };
  Kind kind = Kind::kEpsilon;
  uint8_t lo = 0, hi = 0;  // kByte: inclusive range
  int32_t callee = -1;     // kCall: rule index
  int32_t target = -1;
};

// One rule's Thompson NFA.
class NfaBuilder {
 public:
  // inlined[r]: the body to emit in place of a call of rule r, or nullptr to call it.
  NfaBuilder(const std::unordered_map<std::string, int32_t>& rule_index,
             const std::vector<const Expr*>& inlined)
      : rule_index_(rule_index), inlined_(inlined) {}

  int32_t NewState() {
    edges_.emplace_back();
    return static_cast<int32_t>(edges_.size()) - 1;
  }
  bool too_large() const { return static_cast<int32_t>(edges_.size()) > kMaxNfaStates; }
  const std::vector<std::vector<NfaEdge>>& edges() const { return edges_; }

  // Adds the fragment for `e` starting at `from`; returns its end state.
  int32_t Emit(const Expr& e, int32_t from);

 private:
  int32_t AddByte(int32_t from, uint8_t lo, uint8_t hi, int32_t to) {
    edges_[from].push_back({NfaEdge::Kind::kByte, lo, hi, -1, to});
    return to;
  }
  void AddEpsilon(int32_t from, int32_t to) {
    edges_[from].push_back({NfaEdge::Kind::kEpsilon, 0, 0, -1, to});
  }

  int32_t EmitClass(const Expr& e, int32_t from);
  int32_t EmitRepeat(const Expr& e, int32_t from);

  const std::unordered_map<std::string, int32_t>& rule_index_;
  const std::vector<const Expr*>& inlined_;
  std::vector<std::vector<NfaEdge>> edges_;
};

using StateSet = std::vector<int32_t>;  // sorted NFA states

// The NFA states reachable from `seeds` over epsilon edges (the seeds included), sorted.
StateSet EpsilonClosure(const std::vector<std::vector<NfaEdge>>& nfa, StateSet seeds);

}  // namespace tandem::structured::automaton_detail
