// The checks Automaton::Compile runs once every rule's states are built (AutomatonBuilder,
// automaton_builder.h): the start rule must be productive (some text matches it) and no rule may
// be left-recursive (call itself, through nullable rules, before consuming a byte), which the
// matcher could not run; both are found over the built states and calls, and the refusal names
// the rule (and the cycle).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "structured/automaton_builder.h"

namespace tandem::structured {

// A rule is productive when some text matches it: a path from its start to an accepting
// state over bytes and calls of productive rules. A root that is not matches nothing.
Status AutomatonBuilder::CheckRootMatchesSomething(int32_t root) {
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
  return InvalidArgument(
      fmt::format("grammar rule '{}' (the start rule) matches no text at "
                  "all (an empty character class, or a rule that never "
                  "ends?)",
                  a_->rule_names_[root]));
}

bool AutomatonBuilder::Productive(int32_t rule, const std::vector<uint8_t>& productive) const {
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
std::vector<int32_t> AutomatonBuilder::EpsilonReachable(int32_t rule,
                                                        const std::vector<uint8_t>& nullable) {
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

Status AutomatonBuilder::CheckLeftRecursion() {
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

Status AutomatonBuilder::VisitLeftCalls(int32_t r,
                                        const std::vector<std::vector<int32_t>>& left_calls,
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

}  // namespace tandem::structured
