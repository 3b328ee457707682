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
  static bool Reaches(const std::vector<std::vector<int32_t>>& refs, size_t from, size_t target);
  int32_t ExpandedSize(const Grammar& grammar, const std::vector<std::vector<int32_t>>& refs,
                       int32_t r, std::vector<int32_t>& size) const;
  static int32_t CountNodes(const Expr& e);
  Status BuildRule(int32_t rule, const Expr& body);
  int32_t AddState(int32_t rule);
  void Finish();
  Status TooLarge() const;

  // automaton_checks.cpp: productivity of the start rule, left recursion.
  Status CheckRootMatchesSomething(int32_t root);
  bool Productive(int32_t rule, const std::vector<uint8_t>& productive) const;
  std::vector<int32_t> EpsilonReachable(int32_t rule, const std::vector<uint8_t>& nullable);
  Status CheckLeftRecursion();
  Status VisitLeftCalls(int32_t r, const std::vector<std::vector<int32_t>>& left_calls,
                        std::vector<uint8_t>& color, std::vector<int32_t>& path);

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
