// Grammar: the one intermediate form of every structured-output constraint (JSON Schema,
// json_object, regex, choice, GBNF). Each compiler produces a Grammar; the automaton
// (structured/automaton.h) consumes it; ToGbnf prints it as llama.cpp GBNF, the text that
// crosses from the API server to the workers (SamplingParams::structured_grammar).
//
// Matching is over UTF-8 text: a literal matches its bytes; a character class matches one code
// point (encoded as 1-4 UTF-8 bytes) in any of its ranges. Grammars are context-free; rules may
// recurse but not left-recurse (the automaton refuses that by name).
//
// Reference for the text form: llama.cpp grammars/README.md (GBNF).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tandem::structured {

// Inclusive range of Unicode code points.
struct CodepointRange {
  uint32_t lo = 0;
  uint32_t hi = 0;
  bool operator==(const CodepointRange&) const = default;
};

inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;

struct Expr {
  enum class Kind {
    kEmpty,      // matches ""
    kLiteral,    // matches `literal` (UTF-8 bytes) exactly; never empty (use kEmpty)
    kCharClass,  // one code point within any of `ranges` (sorted, disjoint, non-adjacent)
    kSequence,   // children one after another (>= 2 children)
    kChoice,     // any one child (>= 2 children)
    kRepeat,     // children[0] between min_repeat and max_repeat times
    kRuleRef,    // the rule named `rule`
  };
  Kind kind = Kind::kEmpty;
  std::string literal;                 // kLiteral
  std::vector<CodepointRange> ranges;  // kCharClass; surrogates D800-DFFF never included
  std::vector<Expr> children;          // kSequence, kChoice, kRepeat (exactly one)
  int32_t min_repeat = 0;              // kRepeat
  int32_t max_repeat = -1;             // kRepeat; -1 = unbounded
  std::string rule;                    // kRuleRef
};

// Rules in definition order; `root` names the start rule.
struct Grammar {
  std::vector<std::pair<std::string, Expr>> rules;
  std::string root = "root";

  // The rule's body, or nullptr. O(1): a name index kept by Add (rebuilt when `rules` was
  // appended to directly). Not thread-safe against a concurrent Find on the same grammar.
  const Expr* Find(const std::string& name) const;
  // Adds a rule (names must be unique: [a-zA-Z0-9-]+). O(1) amortized, so that a grammar of n
  // rules is built in O(n) (a client's GBNF may have 100,000 rules).
  void Add(std::string name, Expr body);

 private:
  mutable std::unordered_map<std::string, size_t> index_;  // name -> position in rules
};

// Builders. They simplify as they go (a one-child sequence is the child, an empty literal is
// kEmpty, nested sequences/choices flatten), so compilers may build naively.
Expr Empty();
Expr Literal(std::string utf8);
// A class from ranges in any order, overlapping or not; `negated` takes the complement within
// [0, kMaxCodepoint]. Surrogates are dropped. An empty class (matches nothing) is allowed.
Expr CharClass(std::vector<CodepointRange> ranges, bool negated = false);
Expr AnyCodepoint();  // GBNF "."
Expr Sequence(std::vector<Expr> children);
Expr Choice(std::vector<Expr> children);
Expr Repeat(Expr child, int32_t min_repeat, int32_t max_repeat);  // max -1 = unbounded
Expr Optional(Expr child);                                        // Repeat(child, 0, 1)
Expr Star(Expr child);                                            // Repeat(child, 0, -1)
Expr Plus(Expr child);                                            // Repeat(child, 1, -1)
Expr RuleRef(std::string name);

// llama.cpp GBNF text of `grammar` (root rule first, then the others in order). ParseGbnf
// (gbnf_parser.h) of the text gives an equivalent grammar.
std::string ToGbnf(const Grammar& grammar);

// The UTF-8 encoding of code point `cp` (<= kMaxCodepoint).
std::string EncodeUtf8(uint32_t cp);

}  // namespace tandem::structured
