// Automaton::Compile (the design is in automaton.h): AutomatonBuilder indexes the grammar's
// rules and checks their references, chooses the small non-recursive rules to emit in place of
// their calls, turns each rule's NFA (nfa_builder.h) into deterministic states by subset
// construction within a work budget, and lays out the calls; the checks that follow (a start
// rule that matches nothing, left recursion) are in automaton_checks.cpp.
#include "structured/automaton.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "structured/automaton_builder.h"
#include "structured/nfa_builder.h"

namespace tandem::structured {

using automaton_detail::EpsilonClosure;
using automaton_detail::NfaBuilder;
using automaton_detail::NfaEdge;
using automaton_detail::StateSet;

Result<std::shared_ptr<const Automaton>> Automaton::Compile(const Grammar& grammar) {
  return AutomatonBuilder().Build(grammar);
}

Result<std::shared_ptr<const Automaton>> AutomatonBuilder::Build(const Grammar& grammar) {
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

Status AutomatonBuilder::IndexRules(const Grammar& grammar) {
  for (size_t r = 0; r < grammar.rules.size(); ++r) {
    rule_index_[grammar.rules[r].first] = static_cast<int32_t>(r);
    a_->rule_names_.push_back(grammar.rules[r].first);
  }
  if (!rule_index_.count(grammar.root)) {
    return InvalidArgument(fmt::format("grammar has no rule '{}' (the start rule)", grammar.root));
  }
  for (const auto& [name, body] : grammar.rules) {
    TANDEM_RETURN_IF_ERROR(CheckRefs(name, body));
  }
  return Status::Ok();
}

Status AutomatonBuilder::CheckRefs(const std::string& rule, const Expr& e) {
  if (e.kind == Expr::Kind::kRuleRef && !rule_index_.count(e.rule)) {
    return InvalidArgument(
        fmt::format("grammar rule '{}' uses rule '{}', which is not "
                    "defined",
                    rule, e.rule));
  }
  for (const Expr& child : e.children) {
    TANDEM_RETURN_IF_ERROR(CheckRefs(rule, child));
  }
  return Status::Ok();
}

// Small non-recursive rules are emitted in place of their calls. A call is where a
// position's mask stops knowing the context (a pop below it makes tokens uncertain), so a
// JSON string's "char" rule called per character would make nearly every token uncertain;
// inlined, the string's content is one rule's states and its masks are context-independent.
void AutomatonBuilder::ChooseInlinedRules(const Grammar& grammar) {
  const size_t n = grammar.rules.size();
  std::vector<std::vector<int32_t>> refs(n);
  for (size_t r = 0; r < n; ++r) {
    CollectRefs(grammar.rules[r].second, &refs[r]);
  }
  const std::vector<uint8_t> recursive = RecursiveRules(refs);
  // size[r]: rule r's body nodes with its non-recursive callees counted expanded, capped just
  // past kMaxInlinedNodes. Non-recursive rules form a DAG: sizes in post-order, iteratively.
  constexpr int32_t kOver = kMaxInlinedNodes + 1;
  std::vector<int32_t> size(n, -1);               // -1 = not computed
  std::vector<std::pair<int32_t, size_t>> stack;  // rule, next callee to add
  for (size_t first = 0; first < n; ++first) {
    if (recursive[first] || size[first] >= 0) {
      continue;
    }
    size[first] = std::min(kOver, CountNodes(grammar.rules[first].second));
    stack.assign(1, {static_cast<int32_t>(first), 0});
    while (!stack.empty()) {
      auto& [r, next] = stack.back();
      if (next == refs[r].size() || size[r] >= kOver) {
        const int32_t done = r;
        stack.pop_back();
        if (!stack.empty()) {
          const int32_t caller = stack.back().first;
          size[caller] = std::min(kOver, size[caller] + size[done]);
        }
        continue;
      }
      const int32_t callee = refs[r][next++];
      if (recursive[callee]) {
        continue;
      }
      if (size[callee] >= 0) {
        size[r] = std::min(kOver, size[r] + size[callee]);
        continue;
      }
      size[callee] = std::min(kOver, CountNodes(grammar.rules[callee].second));
      stack.emplace_back(callee, 0);
    }
  }
  inlined_.assign(n, nullptr);
  for (size_t r = 0; r < n; ++r) {
    if (grammar.rules[r].first == grammar.root || recursive[r]) {
      continue;
    }
    if (size[r] <= kMaxInlinedNodes) {
      inlined_[r] = &grammar.rules[r].second;
    }
  }
}

void AutomatonBuilder::CollectRefs(const Expr& e, std::vector<int32_t>* out) const {
  if (e.kind == Expr::Kind::kRuleRef) {
    out->push_back(rule_index_.at(e.rule));
  }
  for (const Expr& child : e.children) {
    CollectRefs(child, out);
  }
}

std::vector<uint8_t> AutomatonBuilder::RecursiveRules(
    const std::vector<std::vector<int32_t>>& refs) {
  const int32_t n = static_cast<int32_t>(refs.size());
  std::vector<uint8_t> recursive(n, 0);
  std::vector<int32_t> index(n, -1), low(n, 0), scc_stack;
  std::vector<uint8_t> on_stack(n, 0);
  std::vector<std::pair<int32_t, size_t>> dfs;  // rule, next reference to follow
  int32_t counter = 0;
  for (int32_t first = 0; first < n; ++first) {
    if (index[first] >= 0) {
      continue;
    }
    dfs.assign(1, {first, 0});
    index[first] = low[first] = counter++;
    scc_stack.push_back(first);
    on_stack[first] = 1;
    while (!dfs.empty()) {
      auto& [v, next] = dfs.back();
      if (next < refs[v].size()) {
        const int32_t w = refs[v][next++];
        if (w == v) {
          recursive[v] = 1;  // calls itself directly
        }
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          scc_stack.push_back(w);
          on_stack[w] = 1;
          dfs.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const int32_t done = v;
      dfs.pop_back();
      if (!dfs.empty()) {
        low[dfs.back().first] = std::min(low[dfs.back().first], low[done]);
      }
      if (low[done] != index[done]) {
        continue;
      }
      // `done` roots a component: pop it; more than one rule in it means a cycle.
      const size_t top = scc_stack.size();
      size_t bottom = top;
      while (scc_stack[bottom - 1] != done) {
        --bottom;
      }
      --bottom;
      const bool cycle = top - bottom > 1;
      for (size_t i = bottom; i < top; ++i) {
        on_stack[scc_stack[i]] = 0;
        if (cycle) {
          recursive[scc_stack[i]] = 1;
        }
      }
      scc_stack.resize(bottom);
    }
  }
  return recursive;
}

int32_t AutomatonBuilder::CountNodes(const Expr& e) {
  int32_t n = 1;
  for (const Expr& child : e.children) {
    n += CountNodes(child);
  }
  return n;
}

// Subset construction of one rule's NFA, appending its states to the shared numbering.
Status AutomatonBuilder::BuildRule(int32_t rule, const Expr& body) {
  NfaBuilder nfa(rule_index_, inlined_);
  const int32_t start = nfa.NewState();
  const int32_t final_state = nfa.Emit(body, start);
  if (nfa.too_large()) {
    return TooLarge();
  }
  const auto& edges = nfa.edges();
  std::map<StateSet, int32_t> ids;
  std::vector<StateSet> work;
  auto intern = [&](StateSet set) -> Result<int32_t> {
    auto it = ids.find(set);
    if (it != ids.end()) {
      return it->second;
    }
    const int32_t id = AddState(rule);
    if (id >= Automaton::kMaxStates) {
      return TooLarge();
    }
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
    if (compile_work_ > kMaxCompileWork) {
      return TooLarge();
    }
    for (int b = 0; b < 256; ++b) {
      StateSet targets;
      for (int32_t s : set) {
        for (const NfaEdge& e : edges[s]) {
          if (e.kind == NfaEdge::Kind::kByte && e.lo <= b && b <= e.hi) {
            targets.push_back(e.target);
          }
        }
      }
      if (targets.empty()) {
        continue;
      }
      TANDEM_ASSIGN_OR_RETURN(const int32_t next, intern(EpsilonClosure(edges, targets)));
      a_->next_[static_cast<size_t>(id) * 256 + b] = next;
      a_->has_byte_edges_[id] = 1;
    }
    std::map<int32_t, StateSet> by_callee;
    for (int32_t s : set) {
      for (const NfaEdge& e : edges[s]) {
        if (e.kind == NfaEdge::Kind::kCall) {
          by_callee[e.callee].push_back(e.target);
        }
      }
    }
    for (auto& [callee, targets] : by_callee) {
      TANDEM_ASSIGN_OR_RETURN(const int32_t ret, intern(EpsilonClosure(edges, targets)));
      pending_calls_.push_back({id, callee, {-1, ret}});
    }
  }
  return Status::Ok();
}

int32_t AutomatonBuilder::AddState(int32_t rule) {
  a_->next_.resize(a_->next_.size() + 256, -1);
  a_->has_byte_edges_.push_back(0);
  a_->accepting_.push_back(0);
  a_->state_rule_.push_back(rule);
  return static_cast<int32_t>(a_->accepting_.size()) - 1;
}

void AutomatonBuilder::Finish() {
  const int32_t n = a_->num_states();
  std::stable_sort(pending_calls_.begin(), pending_calls_.end(),
                   [](const PendingCall& x, const PendingCall& y) { return x.state < y.state; });
  a_->call_begin_.assign(n + 1, 0);
  for (const PendingCall& c : pending_calls_) {
    ++a_->call_begin_[c.state + 1];
  }
  for (int32_t s = 0; s < n; ++s) {
    a_->call_begin_[s + 1] += a_->call_begin_[s];
  }
  for (const PendingCall& c : pending_calls_) {
    a_->calls_.push_back(c.call);
    call_rule_.push_back(c.callee);
  }
}

Status AutomatonBuilder::TooLarge() const {
  return InvalidArgument(fmt::format(
      "grammar is too large: its automaton passes {} states or its compilation the work "
      "limit (nested or large bounded repetitions, e.g. (a{{0,20}}){{0,20}}?)",
      Automaton::kMaxStates));
}

}  // namespace tandem::structured
