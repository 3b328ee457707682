#include "structured/grammar_matcher.h"

#include <gtest/gtest.h>

#include <random>

#include "structured/automaton.h"
#include "structured/compiled_grammar.h"
#include "structured/gbnf_parser.h"
#include "testing.h"

namespace tandem::structured {
namespace {

using testing::ReferenceMatch;

std::shared_ptr<const Automaton> CompileText(const std::string& gbnf) {
  auto grammar = ParseGbnf(gbnf);
  EXPECT_TRUE(grammar.ok()) << grammar.status().message();
  auto automaton = Automaton::Compile(*grammar);
  EXPECT_TRUE(automaton.ok()) << automaton.status().message();
  return *automaton;
}

bool MatchesWhole(const std::shared_ptr<const Automaton>& automaton, std::string_view text) {
  GrammarMatcher matcher(automaton);
  return matcher.AcceptBytes(text) && matcher.CanEnd();
}

// Every string over `alphabet` up to `max_len` characters.
std::vector<std::string> AllStrings(const std::string& alphabet, size_t max_len) {
  std::vector<std::string> out{""};
  for (size_t begin = 0, len = 0; len < max_len; ++len) {
    const size_t end = out.size();
    for (size_t i = begin; i < end; ++i) {
      for (char c : alphabet) out.push_back(out[i] + c);
    }
    begin = end;
  }
  return out;
}

struct MatcherCase {
  std::string gbnf;
  std::string alphabet;
};

TEST(GrammarMatcherTest, AgreesWithTheReferenceMatcherOnEveryShortString) {
  const std::vector<MatcherCase> cases = {
      {"root ::= \"ab\" | \"a\" \"c\"*", "abc"},
      {"root ::= item (\",\" item)*\nitem ::= [0-9]+ | \"[\" root? \"]\"", "1,[]"},
      {"root ::= x{2,3} y?\nx ::= \"a\" | \"\"\ny ::= \"b\"", "ab"},
      {"root ::= (\"(\" root \")\")* ", "()"},
      {"root ::= a b\na ::= \"x\"?\nb ::= a \"y\"", "xy"},
      {"root ::= [^a]{1,2} \"a\"", "abc"},
      {"root ::= \"\"", "a"},
  };
  for (const MatcherCase& c : cases) {
    auto grammar = ParseGbnf(c.gbnf);
    ASSERT_TRUE(grammar.ok()) << c.gbnf << ": " << grammar.status().message();
    auto automaton = Automaton::Compile(*grammar);
    ASSERT_TRUE(automaton.ok()) << c.gbnf << ": " << automaton.status().message();
    int matched = 0;
    for (const std::string& s : AllStrings(c.alphabet, 6)) {
      const bool expected = ReferenceMatch(*grammar, s);
      matched += expected;
      EXPECT_EQ(MatchesWhole(*automaton, s), expected) << c.gbnf << " on '" << s << "'";
    }
    EXPECT_GT(matched, 0) << c.gbnf << " matched nothing: the case tests nothing";
  }
}

TEST(GrammarMatcherTest, RejectedBytesLeaveTheMatcherUnchanged) {
  GrammarMatcher matcher(CompileText("root ::= \"ab\" \"c\"+"));
  EXPECT_TRUE(matcher.AcceptBytes("a"));
  EXPECT_FALSE(matcher.AcceptBytes("bx"));
  EXPECT_TRUE(matcher.AcceptBytes("bc"));
  EXPECT_TRUE(matcher.CanEnd());
  EXPECT_FALSE(matcher.IsTerminated());
}

TEST(GrammarMatcherTest, EveryCodepointOfAClassMatchesAtItsUtf8Boundaries) {
  Grammar g;
  g.Add("root", CharClass({{0x7E, 0x81}, {0x7FE, 0x801}, {0xFFFE, 0x10001}, {0x10FFFF, 0x10FFFF}}));
  auto automaton = Automaton::Compile(g);
  ASSERT_TRUE(automaton.ok());
  for (uint32_t cp : {0x7Du, 0x7Eu, 0x81u, 0x82u, 0x7FDu, 0x7FEu, 0x800u, 0x801u, 0x802u, 0xFFFDu,
                      0xFFFEu, 0xFFFFu, 0x10000u, 0x10001u, 0x10002u, 0x10FFFEu, 0x10FFFFu}) {
    EXPECT_EQ(MatchesWhole(*automaton, EncodeUtf8(cp)), ReferenceMatch(g, EncodeUtf8(cp)))
        << std::hex << cp;
  }
  EXPECT_FALSE(MatchesWhole(*automaton, "\xC1\xBE"));  // overlong 0x7E
}

TEST(GrammarMatcherTest, Utf8RangeSequencesCoverEachCodepointExactlyOnce) {
  for (auto [lo, hi] : {std::pair<uint32_t, uint32_t>{0, 0xD7FF},
                        {0xE000, 0x10FFFF},
                        {0x80, 0x10FF},
                        {0x3A9, 0x20AC}}) {
    const auto seqs = Utf8RangeSequences(lo, hi);
    for (uint32_t cp = lo; cp <= hi; cp += (cp < 0x20000 ? 1 : 97)) {
      const std::string enc = EncodeUtf8(cp);
      int covering = 0;
      for (const auto& seq : seqs) {
        if (seq.size() != enc.size()) continue;
        bool in = true;
        for (size_t k = 0; k < seq.size(); ++k) {
          const uint8_t b = static_cast<uint8_t>(enc[k]);
          in = in && seq[k].first <= b && b <= seq[k].second;
        }
        covering += in;
      }
      ASSERT_EQ(covering, 1) << std::hex << cp;
    }
  }
}

TEST(GrammarMatcherTest, LeftRecursionIsRefusedNamingTheCycle) {
  auto grammar = ParseGbnf("root ::= list\nlist ::= item | list \",\" item\nitem ::= [a-z]");
  ASSERT_TRUE(grammar.ok());
  auto automaton = Automaton::Compile(*grammar);
  ASSERT_FALSE(automaton.ok());
  EXPECT_NE(automaton.status().message().find("'list' is left-recursive"), std::string::npos)
      << automaton.status().message();
  // Through a nullable prefix too.
  grammar = ParseGbnf("root ::= ws root \"x\" | \"y\"\nws ::= \" \"*");
  ASSERT_TRUE(grammar.ok());
  EXPECT_FALSE(Automaton::Compile(*grammar).ok());
}

// An ambiguous grammar doubles its stacks per byte; the closure keeps a bounded set, so a long
// input is read quickly and every token still allowed is valid.
TEST(GrammarMatcherTest, AmbiguousGrammarStaysBoundedAndSound) {
  auto automaton =
      CompileText("root ::= s\ns ::= s1 | s2\ns1 ::= \"a\" s | \"\"\ns2 ::= \"a\" s | \"\"");
  GrammarMatcher matcher(automaton);
  ASSERT_TRUE(matcher.AcceptBytes(std::string(200, 'a')));
  EXPECT_TRUE(matcher.CanEnd());
  EXPECT_LE(matcher.stacks().size(), kMaxStacks);
  EXPECT_FALSE(matcher.AcceptBytes("b"));
}

TEST(GrammarMatcherTest, BlowUpsAndEmptyLanguagesAreRefusedAtCompileTime) {
  for (const char* text : {"root ::= ((\"a\"{0,20}){0,20}){0,20}", "root ::= (\"a\"?){10000}"}) {
    auto grammar = ParseGbnf(text);
    ASSERT_TRUE(grammar.ok()) << text;
    auto automaton = Automaton::Compile(*grammar);
    ASSERT_FALSE(automaton.ok()) << text;
    EXPECT_NE(automaton.status().message().find("too large"), std::string::npos)
        << automaton.status().message();
  }
  for (const char* text : {"root ::= [^\\x00-\\U0010FFFF]", "root ::= \"a\" root"}) {
    auto grammar = ParseGbnf(text);
    ASSERT_TRUE(grammar.ok()) << text << grammar.status().message();
    auto automaton = Automaton::Compile(*grammar);
    ASSERT_FALSE(automaton.ok()) << text;
    EXPECT_NE(automaton.status().message().find("matches no text"), std::string::npos)
        << automaton.status().message();
  }
}

TEST(GbnfParserTest, ErrorsNameTheLineAndWhatWasExpected) {
  struct Bad {
    std::string text;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"root ::= \"a", "'\"' closing the literal"},
           {"root ::= [a-", "']' closing the character class"},
           {"root ::= x", "rule 'x' is used but not defined"},
           {"item ::= \"a\"", "no 'root' rule"},
           {"root ::= \"a\"\nroot ::= \"b\"", "rule 'root' is defined twice"},
           {"root ::= \"a\"{3,2}", "max < min"},
           {"root ::= \"a\"{99999}", "repetition count above 10000"},
           {"root ::= (\"a\"", "')'"},
           {"root ::= \"\\q\"", "a known escape"},
           {"root ::= [z-a]", "whose end is not below its start"},
           {"root := \"a\"", "line 1, column 6"},
           {"root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')'),
            "nesting deeper than 256"},
       }) {
    auto grammar = ParseGbnf(bad.text);
    ASSERT_FALSE(grammar.ok()) << bad.text;
    EXPECT_NE(grammar.status().message().find(bad.message), std::string::npos)
        << bad.text << " → " << grammar.status().message();
  }
}

TEST(GbnfParserTest, ToGbnfOfAParsedGrammarParsesToTheSameLanguage) {
  const std::string text =
      "root ::= obj\n"
      "obj ::= \"{\" ( pair (\",\" pair)* )? \"}\"  # comment\n"
      "pair ::= str \":\" (str | obj | [0-9]{1,3})\n"
      "str ::= \"\\\"\" [^\"\\\\\\n]* \"\\\"\"\n";
  auto first = ParseGbnf(text);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = ParseGbnf(ToGbnf(*first));
  ASSERT_TRUE(second.ok()) << ToGbnf(*first) << second.status().message();
  for (std::string s : {"{}", "{\"a\":1}", "{\"a\":{\"b\":\"c\"},\"d\":123}", "{\"a\":1234}",
                        "{\"a\"}", "{,}", "{\"a\":\"x\ny\"}"}) {
    EXPECT_EQ(ReferenceMatch(*first, s), ReferenceMatch(*second, s)) << s;
    EXPECT_EQ(MatchesWhole(*Automaton::Compile(*second), s), ReferenceMatch(*first, s)) << s;
  }
}

// The bitmask equals trying every token's bytes on a copy of the matcher, along random walks.
TEST(CompiledGrammarTest, BitmaskEqualsTryingEveryTokenAlongRandomWalks) {
  std::vector<std::string> tokens = {
      "",         "{", "}",  "\"",  "\":",  "\",",   "\"}",    "a",   "ab",   "b",
      ",",        ":", "1",  "12",  "}}",   "{\"",   "\"a\":", "x\"", "\xC3", "\xA9",
      "\xC3\xA9", " ", "ab", "\",", "\"}}", "\"}},", "<eos>"};  // duplicates: "ab", "\","
  tokens.back() = "";                                           // the end token has no bytes
  const int32_t eos = static_cast<int32_t>(tokens.size()) - 1;
  auto vocab = std::make_shared<TokenVocabulary>(tokens, static_cast<int32_t>(tokens.size()) + 3);
  const std::string gbnf =
      "root ::= obj\n"
      "obj ::= \"{\" (pair (\",\" pair)*)? \"}\"\n"
      "pair ::= str \":\" (str | obj | [0-9]+)\n"
      "str ::= \"\\\"\" [^\"]* \"\\\"\"\n";
  CompiledGrammar compiled(CompileText(gbnf), vocab);
  std::mt19937 rng(7);
  const std::vector<int32_t> end_ids{eos};
  int steps = 0;
  for (int walk = 0; walk < 40; ++walk) {
    auto matcher = compiled.NewMatcher();
    for (int step = 0; step < 30; ++step, ++steps) {
      std::vector<int32_t> expected;
      for (int32_t id = 0; id < vocab->vocab_size(); ++id) {
        if (id < static_cast<int32_t>(tokens.size()) && !tokens[id].empty()) {
          GrammarMatcher copy = *matcher;
          if (copy.AcceptBytes(tokens[id])) expected.push_back(id);
        }
      }
      if (matcher->CanEnd() || expected.empty()) expected.push_back(eos);
      std::sort(expected.begin(), expected.end());
      const std::vector<int32_t> allowed = compiled.AllowedTokens(*matcher, end_ids);
      ASSERT_EQ(allowed, expected) << "walk " << walk << " step " << step;
      const int32_t pick = allowed[rng() % allowed.size()];
      if (pick == eos) break;
      ASSERT_TRUE(matcher->AcceptBytes(tokens[pick]));
    }
  }
  EXPECT_GT(steps, 200);
  EXPECT_GT(compiled.num_positions_built(), 5);
}

}  // namespace
}  // namespace tandem::structured
