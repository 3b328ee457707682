#include "structured/automaton.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace tandem::structured {

std::vector<std::vector<std::pair<uint8_t, uint8_t>>> Utf8RangeSequences(uint32_t lo,
                                                                          uint32_t hi) {
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

namespace {

constexpr int32_t kMaxNfaStates = 2'000'000;

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
  int32_t Emit(const Expr& e, int32_t from) {
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

 private:
  int32_t AddByte(int32_t from, uint8_t lo, uint8_t hi, int32_t to) {
    edges_[from].push_back({NfaEdge::Kind::kByte, lo, hi, -1, to});
    return to;
  }
  void AddEpsilon(int32_t from, int32_t to) {
    edges_[from].push_back({NfaEdge::Kind::kEpsilon, 0, 0, -1, to});
  }

  int32_t EmitClass(const Expr& e, int32_t from) {
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

  int32_t EmitRepeat(const Expr& e, int32_t from) {
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

  const std::unordered_map<std::string, int32_t>& rule_index_;
  const std::vector<const Expr*>& inlined_;
  std::vector<std::vector<NfaEdge>> edges_;
};

using StateSet = std::vector<int32_t>;  // sorted NFA states

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

}  // namespace

// Builds the automaton rule by rule, then checks nullability and left recursion.
class AutomatonBuilder {
 public:
  Result<std::shared_ptr<const Automaton>> Build(const Grammar& grammar) {
    TANDEM_RETURN_IF_ERROR(IndexRules(grammar));
    ChooseInlinedRules(grammar);
    for (size_t r = 0; r < grammar.rules.size(); ++r) {
      TANDEM_RETURN_IF_ERROR(BuildRule(static_cast<int32_t>(r), grammar.rules[r].second));
    }
    for (PendingCall& call : pending_calls_) {
      call.call.callee_start = rule_start_[call.callee];
    }
    Finish();
    TANDEM_RETURN_IF_ERROR(CheckLeftRecursion());
    TANDEM_RETURN_IF_ERROR(CheckRootMatchesSomething(rule_index_.at(grammar.root)));
    a_->start_state_ = rule_start_[rule_index_.at(grammar.root)];
    return std::shared_ptr<const Automaton>(std::move(a_));
  }

 private:
  struct PendingCall {
    int32_t state;
    int32_t callee;  // rule index
    Automaton::Call call;
  };

  Status IndexRules(const Grammar& grammar) {
    for (size_t r = 0; r < grammar.rules.size(); ++r) {
      rule_index_[grammar.rules[r].first] = static_cast<int32_t>(r);
      a_->rule_names_.push_back(grammar.rules[r].first);
    }
    if (!rule_index_.count(grammar.root)) {
      return InvalidArgument(fmt::format("grammar has no rule '{}' (the start rule)",
                                         grammar.root));
    }
    for (const auto& [name, body] : grammar.rules) {
      TANDEM_RETURN_IF_ERROR(CheckRefs(name, body));
    }
    return Status::Ok();
  }

  Status CheckRefs(const std::string& rule, const Expr& e) {
    if (e.kind == Expr::Kind::kRuleRef && !rule_index_.count(e.rule)) {
      return InvalidArgument(fmt::format("grammar rule '{}' uses rule '{}', which is not "
                                         "defined", rule, e.rule));
    }
    for (const Expr& child : e.children) TANDEM_RETURN_IF_ERROR(CheckRefs(rule, child));
    return Status::Ok();
  }

  // Small non-recursive rules are emitted in place of their calls. A call is where a
  // position's mask stops knowing the context (a pop below it makes tokens uncertain), so a
  // JSON string's "char" rule called per character would make nearly every token uncertain;
  // inlined, the string's content is one rule's states and its masks are context-independent.
  void ChooseInlinedRules(const Grammar& grammar) {
    const size_t n = grammar.rules.size();
    std::vector<std::vector<int32_t>> refs(n);
    for (size_t r = 0; r < n; ++r) CollectRefs(grammar.rules[r].second, &refs[r]);
    inlined_.assign(n, nullptr);
    std::vector<int32_t> size(n, -1);  // expanded node count; -1 = not computed
    for (size_t r = 0; r < n; ++r) {
      if (grammar.rules[r].first == grammar.root || Reaches(refs, r, r)) continue;
      if (ExpandedSize(grammar, refs, static_cast<int32_t>(r), size) <= kMaxInlinedNodes) {
        inlined_[r] = &grammar.rules[r].second;
      }
    }
  }

  void CollectRefs(const Expr& e, std::vector<int32_t>* out) const {
    if (e.kind == Expr::Kind::kRuleRef) out->push_back(rule_index_.at(e.rule));
    for (const Expr& child : e.children) CollectRefs(child, out);
  }

  static bool Reaches(const std::vector<std::vector<int32_t>>& refs, size_t from, size_t target) {
    std::vector<uint8_t> seen(refs.size(), 0);
    std::vector<int32_t> work(refs[from].begin(), refs[from].end());
    while (!work.empty()) {
      const int32_t r = work.back();
      work.pop_back();
      if (static_cast<size_t>(r) == target) return true;
      if (seen[r]) continue;
      seen[r] = 1;
      work.insert(work.end(), refs[r].begin(), refs[r].end());
    }
    return false;
  }

  // Nodes of rule r's body with non-recursive callees counted expanded (callers only ask for
  // non-recursive rules, so the recursion ends).
  int32_t ExpandedSize(const Grammar& grammar, const std::vector<std::vector<int32_t>>& refs,
                       int32_t r, std::vector<int32_t>& size) const {
    if (size[r] >= 0) return size[r];
    size[r] = kMaxInlinedNodes + 1;  // guards against cycles while computing
    int32_t total = CountNodes(grammar.rules[r].second);
    for (int32_t callee : refs[r]) {
      total += Reaches(refs, callee, callee) ? 0 : ExpandedSize(grammar, refs, callee, size);
      if (total > kMaxInlinedNodes) break;
    }
    size[r] = total;
    return total;
  }

  static int32_t CountNodes(const Expr& e) {
    int32_t n = 1;
    for (const Expr& child : e.children) n += CountNodes(child);
    return n;
  }

  // Subset construction of one rule's NFA, appending its states to the shared numbering.
  Status BuildRule(int32_t rule, const Expr& body) {
    NfaBuilder nfa(rule_index_, inlined_);
    const int32_t start = nfa.NewState();
    const int32_t final_state = nfa.Emit(body, start);
    if (nfa.too_large()) return TooLarge();
    const auto& edges = nfa.edges();
    std::map<StateSet, int32_t> ids;
    std::vector<StateSet> work;
    auto intern = [&](StateSet set) -> Result<int32_t> {
      auto it = ids.find(set);
      if (it != ids.end()) return it->second;
      const int32_t id = AddState(rule);
      if (id >= Automaton::kMaxStates) return TooLarge();
      a_->accepting_[id] = std::binary_search(set.begin(), set.end(), final_state);
      ids.emplace(set, id);
      work.push_back(std::move(set));
      return id;
    };
    TANDEM_ASSIGN_OR_RETURN(const int32_t start_id, intern(EpsilonClosure(edges, {start})));
    rule_start_[rule] = start_id;
    while (!work.empty()) {
      const StateSet set = std::move(work.back());
      work.pop_back();
      const int32_t id = ids.at(set);
      // Subset construction can blow up (nested bounded repetitions make sets as large as the
      // NFA): a budget on the work done and the NFA states held in sets refuses such grammars.
      compile_work_ += 256 * static_cast<int64_t>(set.size()) + static_cast<int64_t>(set.size());
      if (compile_work_ > kMaxCompileWork) return TooLarge();
      for (int b = 0; b < 256; ++b) {
        StateSet targets;
        for (int32_t s : set) {
          for (const NfaEdge& e : edges[s]) {
            if (e.kind == NfaEdge::Kind::kByte && e.lo <= b && b <= e.hi) {
              targets.push_back(e.target);
            }
          }
        }
        if (targets.empty()) continue;
        TANDEM_ASSIGN_OR_RETURN(const int32_t next, intern(EpsilonClosure(edges, targets)));
        a_->next_[static_cast<size_t>(id) * 256 + b] = next;
        a_->has_byte_edges_[id] = 1;
      }
      std::map<int32_t, StateSet> by_callee;
      for (int32_t s : set) {
        for (const NfaEdge& e : edges[s]) {
          if (e.kind == NfaEdge::Kind::kCall) by_callee[e.callee].push_back(e.target);
        }
      }
      for (auto& [callee, targets] : by_callee) {
        TANDEM_ASSIGN_OR_RETURN(const int32_t ret, intern(EpsilonClosure(edges, targets)));
        pending_calls_.push_back({id, callee, {-1, ret}});
      }
    }
    return Status::Ok();
  }

  int32_t AddState(int32_t rule) {
    a_->next_.resize(a_->next_.size() + 256, -1);
    a_->has_byte_edges_.push_back(0);
    a_->accepting_.push_back(0);
    a_->state_rule_.push_back(rule);
    return static_cast<int32_t>(a_->accepting_.size()) - 1;
  }

  void Finish() {
    const int32_t n = a_->num_states();
    std::stable_sort(pending_calls_.begin(), pending_calls_.end(),
                     [](const PendingCall& x, const PendingCall& y) { return x.state < y.state; });
    a_->call_begin_.assign(n + 1, 0);
    for (const PendingCall& c : pending_calls_) ++a_->call_begin_[c.state + 1];
    for (int32_t s = 0; s < n; ++s) a_->call_begin_[s + 1] += a_->call_begin_[s];
    for (const PendingCall& c : pending_calls_) {
      a_->calls_.push_back(c.call);
      call_rule_.push_back(c.callee);
    }
  }

  Status TooLarge() const {
    return InvalidArgument(fmt::format(
        "grammar is too large: its automaton passes {} states or its compilation the work "
        "limit (nested or large bounded repetitions, e.g. (a{{0,20}}){{0,20}}?)",
        Automaton::kMaxStates));
  }

  // A rule is productive when some text matches it: a path from its start to an accepting
  // state over bytes and calls of productive rules. A root that is not matches nothing.
  Status CheckRootMatchesSomething(int32_t root) {
    const size_t num_rules = a_->rule_names_.size();
    std::vector<uint8_t> productive(num_rules, 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < num_rules; ++r) {
        if (!productive[r] && Productive(static_cast<int32_t>(r), productive)) {
          productive[r] = 1;
          changed = true;
        }
      }
    }
    if (productive[root]) return Status::Ok();
    return InvalidArgument(fmt::format("grammar rule '{}' (the start rule) matches no text at "
                                       "all (an empty character class, or a rule that never "
                                       "ends?)", a_->rule_names_[root]));
  }

  bool Productive(int32_t rule, const std::vector<uint8_t>& productive) const {
    std::vector<int32_t> seen{rule_start_.at(rule)};
    std::vector<uint8_t> mark(a_->num_states(), 0);
    mark[seen[0]] = 1;
    for (size_t i = 0; i < seen.size(); ++i) {
      const int32_t s = seen[i];
      if (a_->IsAccepting(s)) return true;
      auto visit = [&](int32_t t) {
        if (t >= 0 && !mark[t]) {
          mark[t] = 1;
          seen.push_back(t);
        }
      };
      if (a_->HasByteEdges(s)) {
        for (int b = 0; b < 256; ++b) visit(a_->Next(s, static_cast<uint8_t>(b)));
      }
      for (int32_t k = a_->call_begin_[s]; k < a_->call_begin_[s + 1]; ++k) {
        if (productive[call_rule_[k]]) visit(a_->calls_[k].return_state);
      }
    }
    return false;
  }

  // States of `rule` reachable from its start without consuming a byte (through calls of
  // nullable rules).
  std::vector<int32_t> EpsilonReachable(int32_t rule, const std::vector<uint8_t>& nullable) {
    std::vector<int32_t> seen{rule_start_[rule]};
    for (size_t i = 0; i < seen.size(); ++i) {
      const int32_t s = seen[i];
      const auto calls = a_->Calls(s);
      for (size_t k = 0; k < calls.size(); ++k) {
        const int32_t callee = call_rule_[a_->call_begin_[s] + k];
        if (nullable[callee] &&
            std::find(seen.begin(), seen.end(), calls[k].return_state) == seen.end()) {
          seen.push_back(calls[k].return_state);
        }
      }
    }
    return seen;
  }

  Status CheckLeftRecursion() {
    const size_t num_rules = a_->rule_names_.size();
    std::vector<uint8_t> nullable(num_rules, 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < num_rules; ++r) {
        if (nullable[r]) continue;
        for (int32_t s : EpsilonReachable(static_cast<int32_t>(r), nullable)) {
          if (a_->IsAccepting(s)) {
            nullable[r] = 1;
            changed = true;
            break;
          }
        }
      }
    }
    // left_calls[r]: rules r may call before consuming anything.
    std::vector<std::vector<int32_t>> left_calls(num_rules);
    for (size_t r = 0; r < num_rules; ++r) {
      for (int32_t s : EpsilonReachable(static_cast<int32_t>(r), nullable)) {
        for (int32_t k = a_->call_begin_[s]; k < a_->call_begin_[s + 1]; ++k) {
          left_calls[r].push_back(call_rule_[k]);
        }
      }
    }
    std::vector<uint8_t> color(num_rules, 0);  // 0 new, 1 on the path, 2 done
    std::vector<int32_t> path;
    for (size_t r = 0; r < num_rules; ++r) {
      TANDEM_RETURN_IF_ERROR(VisitLeftCalls(static_cast<int32_t>(r), left_calls, color, path));
    }
    return Status::Ok();
  }

  Status VisitLeftCalls(int32_t r, const std::vector<std::vector<int32_t>>& left_calls,
                        std::vector<uint8_t>& color, std::vector<int32_t>& path) {
    if (color[r] == 2) return Status::Ok();
    if (color[r] == 1) {
      std::string cycle;
      auto it = std::find(path.begin(), path.end(), r);
      for (; it != path.end(); ++it) cycle += a_->rule_names_[*it] + " -> ";
      return InvalidArgument(fmt::format(
          "grammar rule '{}' is left-recursive ({}{}) : it can call itself without consuming "
          "input; rewrite it with repetition (e.g. x ::= y (\",\" y)*)",
          a_->rule_names_[r], cycle, a_->rule_names_[r]));
    }
    color[r] = 1;
    path.push_back(r);
    for (int32_t callee : left_calls[r]) {
      TANDEM_RETURN_IF_ERROR(VisitLeftCalls(callee, left_calls, color, path));
    }
    path.pop_back();
    color[r] = 2;
    return Status::Ok();
  }

  static constexpr int32_t kMaxInlinedNodes = 64;
  static constexpr int64_t kMaxCompileWork = 200'000'000;  // ~1 s of subset construction
  int64_t compile_work_ = 0;

  std::unique_ptr<Automaton> a_ = std::make_unique<Automaton>();
  std::unordered_map<std::string, int32_t> rule_index_;
  std::vector<const Expr*> inlined_;  // [rule] body emitted in place of its calls, or nullptr
  std::unordered_map<int32_t, int32_t> rule_start_;
  std::vector<PendingCall> pending_calls_;
  std::vector<int32_t> call_rule_;  // parallel to a_->calls_: the callee's rule index
};

Result<std::shared_ptr<const Automaton>> Automaton::Compile(const Grammar& grammar) {
  return AutomatonBuilder().Build(grammar);
}

}  // namespace tandem::structured
