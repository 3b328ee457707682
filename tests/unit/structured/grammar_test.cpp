#include "structured/grammar.h"

#include <gtest/gtest.h>

#include "testing.h"

namespace tandem::structured {
namespace {

using testing::ReferenceMatch;

TEST(GrammarTest, BuildersFlattenAndJoinLiterals) {
  const Expr e = Sequence({Literal("a"), Sequence({Literal("b"), Empty()}), Literal("c")});
  ASSERT_EQ(e.kind, Expr::Kind::kLiteral);
  EXPECT_EQ(e.literal, "abc");
}

TEST(GrammarTest, NegatedClassExcludesSurrogatesAndListedCodepoints) {
  const Expr e = CharClass({{'"', '"'}, {'\\', '\\'}}, /*negated=*/true);
  ASSERT_EQ(e.kind, Expr::Kind::kCharClass);
  for (const CodepointRange& r : e.ranges) {
    EXPECT_FALSE(r.lo <= '"' && '"' <= r.hi);
    EXPECT_FALSE(r.lo <= 0xD800 && 0xD800 <= r.hi);
  }
  Grammar g;
  g.Add("root", Star(e));
  EXPECT_TRUE(ReferenceMatch(g, "h\xC3\xA9llo"));
  EXPECT_FALSE(ReferenceMatch(g, "a\"b"));
  EXPECT_FALSE(ReferenceMatch(g, "\xED\xA0\x80"));  // an encoded surrogate is not UTF-8
}

TEST(GrammarTest, ToGbnfPrintsRootFirstWithEscapes) {
  Grammar g;
  g.Add("item", Choice({Literal("a\"b"), CharClass({{'0', '9'}, {'-', '-'}})}));
  g.Add("root", Sequence({Literal("["), Repeat(RuleRef("item"), 1, 3), Literal("]")}));
  EXPECT_EQ(ToGbnf(g),
            "root ::= \"[\" item{1,3} \"]\"\n"
            "item ::= (\"a\\\"b\" | [\\-0-9])\n");
}

}  // namespace
}  // namespace tandem::structured
