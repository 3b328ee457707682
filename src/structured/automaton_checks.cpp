// The checks Automaton::Compile runs once every rule's states are built (AutomatonBuilder,
// automaton_builder.h): the start rule must be productive (some text matches it) and no rule may
// be left-recursive (call itself, through nullable rules, before consuming a byte), which the
// matcher could not run; both are found over the built states and calls, and the refusal names
// the rule (and the cycle).
//
// Every algorithm here is linear in states + byte edges + calls and iterative (no recursion
// whose depth a grammar decides): a client's GBNF may chain 100,000 rules.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "structured/automaton_builder.h"

namespace tandem::structured {

// Backward propagation from the accepting states, over a fixpoint of rules: a state "reaches
// the end" of its rule when it is accepting, or (with `over_bytes`) it has a byte edge to a state
// that does, or it calls a rule whose start reaches the end with the return state reaching it.
// A rule whose start reaches the end is productive (with bytes) or nullable (without). Each
// edge is looked at a bounded number of times: O(states · 256 + calls).
std::vector<uint8_t> AutomatonBuilder::RulesReachingEnd(bool over_bytes) const {
  const int32_t num_states = a_->num_states();
  const size_t num_rules = a_->rule_names_.size();
  // Reverse edges: byte predecessors, and the calls returning to each state.
  std::vector<std::vector<int32_t>> byte_pred;
  if (over_bytes) {
    byte_pred.resize(num_states);
    for (int32_t s = 0; s < num_states; ++s) {
      if (!a_->HasByteEdges(s)) {
        continue;
      }
      int32_t last = -1;
      for (int b = 0; b < 256; ++b) {
        const int32_t t = a_->Next(s, static_cast<uint8_t>(b));
        if (t >= 0 && t != last) {  // runs of one target are common (character classes)
          byte_pred[t].push_back(s);
          last = t;
        }
      }
    }
  }
  std::vector<std::vector<int32_t>> calls_returning_to(num_states);  // call indices
  std::vector<std::vector<int32_t>> calls_of_rule(num_rules);        // call indices
  std::vector<int32_t> call_state(a_->calls_.size());
  for (int32_t s = 0; s < num_states; ++s) {
    for (int32_t k = a_->call_begin_[s]; k < a_->call_begin_[s + 1]; ++k) {
      call_state[k] = s;
      calls_returning_to[a_->calls_[k].return_state].push_back(k);
      calls_of_rule[call_rule_[k]].push_back(k);
    }
  }
  std::vector<uint8_t> reaches(num_states, 0);
  std::vector<uint8_t> rule_done(num_rules, 0);
  std::vector<int32_t> work;
  auto mark = [&](int32_t s) {
    if (!reaches[s]) {
      reaches[s] = 1;
      work.push_back(s);
    }
  };
  for (int32_t s = 0; s < num_states; ++s) {
    if (a_->IsAccepting(s)) {
      mark(s);
    }
  }
  while (!work.empty()) {
    const int32_t t = work.back();
    work.pop_back();
    const int32_t rule = a_->state_rule_[t];
    if (t == rule_start_.at(rule) && !rule_done[rule]) {
      rule_done[rule] = 1;  // calls of this rule now pass where their return state reaches
      for (int32_t k : calls_of_rule[rule]) {
        if (reaches[a_->calls_[k].return_state]) {
          mark(call_state[k]);
        }
      }
    }
    if (over_bytes) {
      for (int32_t s : byte_pred[t]) {
        mark(s);
      }
    }
    for (int32_t k : calls_returning_to[t]) {
      if (rule_done[call_rule_[k]]) {
        mark(call_state[k]);
      }
    }
  }
  return rule_done;
}

Status AutomatonBuilder::CheckRootMatchesSomething(int32_t root) {
  if (RulesReachingEnd(/*over_bytes=*/true)[root]) {
    return Status::Ok();
  }
  return InvalidArgument(
      fmt::format("grammar rule '{}' (the start rule) matches no text at "
                  "all (an empty character class, or a rule that never "
                  "ends?)",
                  a_->rule_names_[root]));
}

Status AutomatonBuilder::CheckLeftRecursion() {
  const size_t num_rules = a_->rule_names_.size();
  const std::vector<uint8_t> nullable = RulesReachingEnd(/*over_bytes=*/false);
  // left_calls[r]: rules r may call before consuming anything — the calls of the states r's
  // start reaches through calls of nullable rules. One stamp array for every rule's walk.
  std::vector<std::vector<int32_t>> left_calls(num_rules);
  std::vector<int32_t> stamp(a_->num_states(), -1);
  std::vector<int32_t> seen;
  for (size_t r = 0; r < num_rules; ++r) {
    const int32_t start = rule_start_.at(static_cast<int32_t>(r));
    seen.assign(1, start);
    stamp[start] = static_cast<int32_t>(r);
    for (size_t i = 0; i < seen.size(); ++i) {
      const int32_t s = seen[i];
      for (int32_t k = a_->call_begin_[s]; k < a_->call_begin_[s + 1]; ++k) {
        const int32_t callee = call_rule_[k];
        left_calls[r].push_back(callee);
        const int32_t ret = a_->calls_[k].return_state;
        if (nullable[callee] && stamp[ret] != static_cast<int32_t>(r)) {
          stamp[ret] = static_cast<int32_t>(r);
          seen.push_back(ret);
        }
      }
    }
  }
  // A cycle among left calls, found by an iterative depth-first search: each frame is a rule
  // and the next of its left calls to follow.
  std::vector<uint8_t> color(num_rules, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<int32_t, size_t>> path;
  for (size_t first = 0; first < num_rules; ++first) {
    if (color[first] != 0) {
      continue;
    }
    color[first] = 1;
    path.assign(1, {static_cast<int32_t>(first), 0});
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == left_calls[r].size()) {
        color[r] = 2;
        path.pop_back();
        continue;
      }
      const int32_t callee = left_calls[r][next++];
      if (color[callee] == 2) {
        continue;
      }
      if (color[callee] == 1) {
        // The cycle named, its middle elided past 8 rules (a client's may be 100,000 long).
        std::string cycle;
        const auto from = std::find_if(path.begin(), path.end(),
                                       [&](const auto& frame) { return frame.first == callee; });
        const auto length = static_cast<size_t>(path.end() - from);
        for (size_t i = 0; i < length; ++i) {
          if (length > 8 && i == 4) {
            cycle += fmt::format("... ({} more rules) -> ", length - 8);
            i = length - 4;
          }
          cycle += a_->rule_names_[(from + static_cast<std::ptrdiff_t>(i))->first] + " -> ";
        }
        return InvalidArgument(fmt::format(
            "grammar rule '{}' is left-recursive ({}{}) : it can call itself without consuming "
            "input; rewrite it with repetition (e.g. x ::= y (\",\" y)*)",
            a_->rule_names_[callee], cycle, a_->rule_names_[callee]));
      }
      color[callee] = 1;
      path.emplace_back(callee, 0);
    }
  }
  return Status::Ok();
}

}  // namespace tandem::structured
