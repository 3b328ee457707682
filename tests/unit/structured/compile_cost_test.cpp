// Hostile sizes for the structured-output compilers (issue 31): a client decides how many rules,
// properties or alternatives there are, so every step must be iterative (no recursion as deep
// as a rule chain) and its cost linear in the input — checked here on what is deterministic:
// the grammar's size at n and 10n, and that inputs far past the limits end in a refusal
// naming the limit instead of a crash.
#include <gtest/gtest.h>

#include <string>

#include "structured/automaton.h"
#include "structured/gbnf_parser.h"
#include "structured/grammar_matcher.h"
#include "structured/json_schema_compiler.h"
#include "structured/regex_compiler.h"
#include "testing.h"

namespace tandem::structured {
namespace compile_cost_test {
namespace {

// root ::= r0, r{i} ::= "a" r{i+1} (or r{i+1} "a" when `left`), r{n} ::= "a".
std::string RuleChain(int n, bool left) {
  std::string text = "root ::= r0\n";
  for (int i = 0; i < n; ++i) {
    const std::string next = "r" + std::to_string(i + 1);
    text += "r" + std::to_string(i) + " ::= " + (left ? next + " \"a\"" : "\"a\" " + next) + "\n";
  }
  text += "r" + std::to_string(n) + " ::= \"a\"\n";
  return text;
}

TEST(CompileCostTest, AChainOfTenThousandRulesCompilesAndMatches) {
  Result<Grammar> g = ParseGbnf(RuleChain(10'000, /*left=*/false));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g.value().rules.size(), 10'002u);
  const auto automaton = Automaton::Compile(g.value());
  ASSERT_TRUE(automaton.ok()) << automaton.status().ToString();
}

TEST(CompileCostTest, AChainOfRulesMatchesItsText) {
  // 300 nested calls: the matcher's closure (pda.h: kMaxClosureVisits) pops them all at the end.
  Result<Grammar> g = ParseGbnf(RuleChain(300, /*left=*/false));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const auto automaton = Automaton::Compile(g.value());
  ASSERT_TRUE(automaton.ok()) << automaton.status().ToString();
  GrammarMatcher matcher(automaton.value());
  ASSERT_TRUE(matcher.AcceptBytes(std::string(300, 'a')));
  EXPECT_FALSE(matcher.CanEnd());
  ASSERT_TRUE(matcher.AcceptBytes("a"));
  EXPECT_TRUE(matcher.CanEnd());
  EXPECT_FALSE(matcher.AcceptBytes("a"));
}

TEST(CompileCostTest, AChainOfAHundredThousandRulesIsRefusedAsTooLargeNotACrash) {
  // 2.4 MB of GBNF: the chain made `tandem serve` overflow its stack (issue 31, item 1).
  Result<Grammar> g = ParseGbnf(RuleChain(100'000, /*left=*/false));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const auto automaton = Automaton::Compile(g.value());
  ASSERT_FALSE(automaton.ok());
  EXPECT_NE(automaton.status().message().find("too large"), std::string::npos)
      << automaton.status().ToString();
}

TEST(CompileCostTest, ALeftNestedChainIsWalkedWithoutRecursion) {
  // r{i} ::= r{i+1} "a": each rule calls the next before consuming a byte, so the left-call
  // graph is a path 10,000 rules long (a recursive walk used one frame per rule).
  Result<Grammar> g = ParseGbnf(RuleChain(10'000, /*left=*/true));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const auto automaton = Automaton::Compile(g.value());
  ASSERT_TRUE(automaton.ok()) << automaton.status().ToString();
}

TEST(CompileCostTest, ALongLeftRecursiveCycleIsRefusedWithABoundedMessage) {
  std::string text = RuleChain(10'000, /*left=*/true);
  text.replace(text.rfind("r10000 ::= \"a\""), std::string::npos, "r10000 ::= r0 \"b\"\n");
  Result<Grammar> g = ParseGbnf(text);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const auto automaton = Automaton::Compile(g.value());
  ASSERT_FALSE(automaton.ok());
  EXPECT_NE(automaton.status().message().find("left-recursive"), std::string::npos);
  EXPECT_LT(automaton.status().message().size(), 1000u) << "the cycle is named, not listed";
}

// The GBNF text of the grammar compiled from an object schema with n required integer
// properties.
std::string RequiredPropertiesGbnf(int n) {
  nlohmann::json properties = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    properties["p" + std::to_string(i)] = {{"type", "integer"}};
    required.push_back("p" + std::to_string(i));
  }
  Result<Grammar> g =
      CompileJsonSchema({{"type", "object"}, {"properties", properties}, {"required", required}});
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? ToGbnf(g.value()) : std::string();
}

TEST(CompileCostTest, AnObjectGrammarGrowsLinearlyWithItsRequiredProperties) {
  // Each property used to copy the rest of the object: 10,000 of them took 24 GB (item 2).
  const size_t small = RequiredPropertiesGbnf(1'000).size();
  const size_t large = RequiredPropertiesGbnf(10'000).size();
  ASSERT_GT(small, 0u);
  // Names grow by a digit from 1,000 to 10,000: 11× is linear with room for that.
  EXPECT_LT(large, 11 * small) << small << " bytes at 1,000 properties, " << large << " at 10,000";
}

TEST(CompileCostTest, AnObjectOfManyOptionalPropertiesStaysLinear) {
  nlohmann::json properties = nlohmann::json::object();
  for (int i = 0; i < 20'000; ++i) {
    properties["q" + std::to_string(i)] = {{"type", "boolean"}};
  }
  Result<Grammar> g = CompileJsonSchema({{"type", "object"}, {"properties", properties}});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_LT(ToGbnf(g.value()).size(), 20'000u * 200) << "a few rules per property";
}

TEST(CompileCostTest, ManyRequiredPropertiesEndInARefusalNamingTheStateLimit) {
  // The automaton of 20,000 required properties passes Automaton::kMaxStates: refused while
  // its states are built, the memory at most the limit's.
  const std::string gbnf = RequiredPropertiesGbnf(20'000);
  Result<Grammar> g = ParseGbnf(gbnf);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const auto automaton = Automaton::Compile(g.value());
  ASSERT_FALSE(automaton.ok());
  EXPECT_NE(automaton.status().message().find("too large"), std::string::npos);
}

TEST(CompileCostTest, ARegexOfManyAlternativesCompiles) {
  std::string pattern;
  for (int i = 0; i < 5'000; ++i) {
    pattern += (i ? "|" : "") + std::string("w") + std::to_string(i);
  }
  Result<Expr> e = CompileRegex(pattern);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Grammar g;
  g.Add("root", e.value());
  const auto automaton = Automaton::Compile(g);
  ASSERT_TRUE(automaton.ok()) << automaton.status().ToString();
  EXPECT_TRUE(testing::ReferenceMatch(g, "w4999"));
}

}  // namespace
}  // namespace compile_cost_test
}  // namespace tandem::structured
