// The first step of Automaton::Compile: UTF-8 byte-range sequences of code point ranges (Russ
// Cox's utf8 range splitting, as in RE2), a rule's Expr as a Thompson NFA over byte ranges, rule
// calls and epsilons (NfaBuilder), and epsilon closures for the subset construction in
// automaton.cpp.
#include "structured/nfa_builder.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "structured/automaton.h"

namespace tandem::structured {

std::vector<std::vector<std::pair<uint8_t, uint8_t>>> Utf8RangeSequences(uint32_t lo, uint32_t hi) {
  std::vector<std::vector<std::pair<uint8_t, uint8_t>>> out;
  if (lo > hi) return out;
  // Split where the encoded length changes, then where the continuation bytes stop spanning
  // their full 0x80-0xBF range, so that every piece is a product of byte ranges.
  for (uint32_t boundary : {0x7Fu, 0x7FFu, 0xFFFFu}) {
    if (lo <= boundary && hi > boundary) {
      out = Utf8RangeSequences(lo, boundary);
      for (auto& seq : Utf8RangeSequences(boundary + 1, hi)) out.push_back(std::move(seq));
      return out;
    }
  }
  if (hi < 0x80) return {{{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}}};
  for (int i = 1; i < 4; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        out = Utf8RangeSequences(lo, lo | m);
        for (auto& seq : Utf8RangeSequences((lo | m) + 1, hi)) out.push_back(std::move(seq));
        return out;
      }
      if ((hi & m) != m) {
        out = Utf8RangeSequences(lo, (hi & ~m) - 1);
        for (auto& seq : Utf8RangeSequences(hi & ~m, hi)) out.push_back(std::move(seq));
        return out;
      }
    }
  }
  const std::string a = EncodeUtf8(lo);
  const std::string b = EncodeUtf8(hi);
  std::vector<std::pair<uint8_t, uint8_t>> seq;
  for (size_t k = 0; k < a.size(); ++k) {
    seq.emplace_back(static_cast<uint8_t>(a[k]), static_cast<uint8_t>(b[k]));
  }
  return {seq};
}

namespace automaton_detail {

int32_t NfaBuilder::Emit(const Expr& e, int32_t from) {
  if (too_large()) return from;
  switch (e.kind) {
    case Expr::Kind::kEmpty:
      return from;
    case Expr::Kind::kLiteral:
      for (unsigned char c : e.literal) from = AddByte(from, c, c, NewState());
      return from;
    case Expr::Kind::kCharClass:
      return EmitClass(e, from);
    case Expr::Kind::kSequence:
      for (const Expr& child : e.children) from = Emit(child, from);
      return from;
    case Expr::Kind::kChoice: {
      const int32_t end = NewState();
      for (const Expr& child : e.children) {
        const int32_t start = NewState();
        AddEpsilon(from, start);
        AddEpsilon(Emit(child, start), end);
      }
      return end;
    }
    case Expr::Kind::kRepeat:
      return EmitRepeat(e, from);
    case Expr::Kind::kRuleRef: {
      const int32_t callee = rule_index_.at(e.rule);
      if (inlined_[callee] != nullptr) return Emit(*inlined_[callee], from);
      const int32_t end = NewState();
      edges_[from].push_back({NfaEdge::Kind::kCall, 0, 0, callee, end});
      return end;
    }
  }
  return from;
}

int32_t NfaBuilder::EmitClass(const Expr& e, int32_t from) {
  const int32_t end = NewState();
  for (const CodepointRange& r : e.ranges) {
    for (const auto& seq : Utf8RangeSequences(r.lo, r.hi)) {
      int32_t at = from;
      for (size_t k = 0; k < seq.size(); ++k) {
        at = AddByte(at, seq[k].first, seq[k].second, k + 1 == seq.size() ? end : NewState());
      }
    }
  }
  return end;
}

int32_t NfaBuilder::EmitRepeat(const Expr& e, int32_t from) {
  const Expr& child = e.children[0];
  for (int32_t i = 0; i < e.min_repeat && !too_large(); ++i) from = Emit(child, from);
  if (e.max_repeat < 0) {
    const int32_t loop = NewState();
    AddEpsilon(from, loop);
    AddEpsilon(Emit(child, loop), loop);
    return loop;
  }
  const int32_t end = NewState();
  AddEpsilon(from, end);
  for (int32_t i = e.min_repeat; i < e.max_repeat && !too_large(); ++i) {
    from = Emit(child, from);
    AddEpsilon(from, end);
  }
  return end;
}

StateSet EpsilonClosure(const std::vector<std::vector<NfaEdge>>& nfa, StateSet seeds) {
  // Generation stamps instead of a cleared "seen" array: a closure costs its own size, not the
  // NFA's.
  static thread_local std::vector<uint32_t> stamp;
  static thread_local uint32_t generation = 0;
  if (stamp.size() < nfa.size()) stamp.resize(nfa.size(), 0);
  if (++generation == 0) {
    std::fill(stamp.begin(), stamp.end(), 0);
    generation = 1;
  }
  std::vector<int32_t> stack(seeds.begin(), seeds.end());
  StateSet out;
  while (!stack.empty()) {
    const int32_t s = stack.back();
    stack.pop_back();
    if (stamp[s] == generation) continue;
    stamp[s] = generation;
    out.push_back(s);
    for (const NfaEdge& edge : nfa[s]) {
      if (edge.kind == NfaEdge::Kind::kEpsilon && stamp[edge.target] != generation) {
        stack.push_back(edge.target);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace automaton_detail
}  // namespace tandem::structured
