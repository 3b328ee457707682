// Automaton: a Grammar compiled into a recursive transition network — one deterministic
// automaton per rule whose edges are bytes or calls of other rules — the form the matcher
// (structured/grammar_matcher.h) runs as a pushdown automaton over bytes.
//
// Compilation: each rule's Expr becomes a Thompson NFA over byte ranges (a character class is
// expanded into its UTF-8 byte-range sequences, Russ Cox's utf8 range splitting as in RE2),
// rule references and epsilons; subset construction then makes it deterministic over the
// symbols {byte 0-255} ∪ {call of rule R}. Choices between a byte edge and a call (or between
// calls) stay: the matcher follows all of them as separate stacks. All rules' states share one
// numbering so a state id alone names a grammar position.
//
// Refused with kInvalidArgument: an undefined rule (naming it and the rule that uses it), a
// missing root, left recursion (a rule that can reach itself without consuming a byte, named
// with the cycle), and automata past the size limits (states, calls), which bound memory.
//
// Reference: the design follows XGrammar (Dong et al. 2024, "XGrammar: Flexible and Efficient
// Structured Generation Engine for Large Language Models"): byte-level pushdown automaton,
// per-position token masks split into context-independent and context-dependent tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "structured/grammar.h"

namespace tandem::structured {

class Automaton {
 public:
  struct Call {
    int32_t callee_start = -1;  // the called rule's start state
    int32_t return_state = -1;  // where the caller goes on when the callee ends
  };

  // Limit on states after determinization: each costs a 1 KB transition row, so this bounds an
  // automaton at ~50 MB (a string of maxLength 10000 needs ~10k states).
  static constexpr int32_t kMaxStates = 50'000;

  // Compiles `grammar`. Errors as in the file comment. Thread: any; the result is immutable.
  static Result<std::shared_ptr<const Automaton>> Compile(const Grammar& grammar);

  int32_t start_state() const { return start_state_; }
  int32_t num_states() const { return static_cast<int32_t>(accepting_.size()); }
  // The state after `byte` from `state`, or -1 when `byte` has no edge there.
  int32_t Next(int32_t state, uint8_t byte) const { return next_[state * 256 + byte]; }
  bool HasByteEdges(int32_t state) const { return has_byte_edges_[state] != 0; }
  // The state's rule may end here (return to its caller, or end the text for the root rule).
  bool IsAccepting(int32_t state) const { return accepting_[state] != 0; }
  std::span<const Call> Calls(int32_t state) const {
    return std::span<const Call>(calls_).subspan(call_begin_[state],
                                                 call_begin_[state + 1] - call_begin_[state]);
  }
  // Bytes this automaton holds (its transition table dominates).
  size_t memory_bytes() const {
    return next_.size() * sizeof(int32_t) + calls_.size() * sizeof(Call) +
           call_begin_.size() * sizeof(int32_t) + state_rule_.size() * sizeof(int32_t) +
           2 * accepting_.size();
  }
  // The name of the rule `state` belongs to (diagnostics).
  const std::string& RuleName(int32_t state) const { return rule_names_[state_rule_[state]]; }

 private:
  friend class AutomatonBuilder;
  int32_t start_state_ = 0;
  std::vector<int32_t> next_;            // [num_states * 256] next state or -1
  std::vector<uint8_t> has_byte_edges_;  // [num_states]
  std::vector<uint8_t> accepting_;       // [num_states]
  std::vector<int32_t> call_begin_;      // [num_states + 1] offsets into calls_
  std::vector<Call> calls_;
  std::vector<int32_t> state_rule_;      // [num_states] rule index
  std::vector<std::string> rule_names_;  // [num_rules]
};

// The UTF-8 byte-range sequences whose union encodes exactly the code points [lo, hi] (no
// surrogates inside the range): each sequence is 1-4 inclusive (first, last) byte ranges.
std::vector<std::vector<std::pair<uint8_t, uint8_t>>> Utf8RangeSequences(uint32_t lo, uint32_t hi);

}  // namespace tandem::structured
