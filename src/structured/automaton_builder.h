// AutomatonBuilder: Automaton::Compile's worker (a friend of Automaton), internal to the
// automaton. It builds the automaton rule by rule: automaton.cpp indexes the rules, chooses the
// small rules to inline, runs the subset construction on each rule's NFA (nfa_builder.h) and
// lays out the calls; automaton_checks.cpp then refuses a start rule that matches nothing and
// left recursion. Nothing here is used outside those files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "structured/automaton.h"
#include "structured/grammar.h"

namespace tandem::structured {

// Builds the automaton rule by rule, then checks nullability and left recursion.
class AutomatonBuilder {
 public:
  Result<std::shared_ptr<const Automaton>> Build(const Grammar& grammar);

 private:
  struct PendingCall {
    int32_t state;
    int32_t callee;  // rule index
    Automaton::Call call;
  };

  // automaton.cpp: rules, inlining, subset construction, call layout.
  Status IndexRules(const Grammar& grammar);
  Status CheckRefs(const std::string& rule, const Expr& e);
  void ChooseInlinedRules(const Grammar& grammar);
  void CollectRefs(const Expr& e, std::vector<int32_t>* out) const;
  // [rule] 1 when the rule can reach itself through references (a cycle of the reference graph,
  // found by Tarjan's strongly connected components, iteratively).
  static std::vector<uint8_t> RecursiveRules(const std::vector<std::vector<int32_t>>& refs);
  static int32_t CountNodes(const Expr& e);
  Status BuildRule(int32_t rule, const Expr& body);
  int32_t AddState(int32_t rule);
  void Finish();
  Status TooLarge() const;

  // automaton_checks.cpp: productivity of the start rule, left recursion.
  Status CheckRootMatchesSomething(int32_t root);
  // [rule] 1 when some path from the rule's start reaches an accepting state: over bytes and
  // calls (productive), or over calls alone (nullable).
  std::vector<uint8_t> RulesReachingEnd(bool over_bytes) const;
  Status CheckLeftRecursion();

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

}  // namespace tandem::structured
