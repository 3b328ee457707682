#include "text/stop_string_matcher.h"

#include <gtest/gtest.h>

namespace tandem::text {
namespace {

TEST(StopStringMatcherTest, TextThatCannotStartAStopIsEmittedAtOnce) {
  StopStringMatcher matcher({"STOP"});
  auto out = matcher.Push("hello ");
  EXPECT_EQ(out.text, "hello ");
  EXPECT_FALSE(out.matched_stop.has_value());
}

TEST(StopStringMatcherTest, SuffixThatMayStartAStopIsHeldBack) {
  StopStringMatcher matcher({"STOP"});
  EXPECT_EQ(matcher.Push("hello ST").text, "hello ");
  // Not a stop after all: the held text comes out with the next chunk.
  EXPECT_EQ(matcher.Push("AR").text, "STAR");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, MatchAcrossChunkBoundaryEndsTheStream) {
  StopStringMatcher matcher({"STOP"});
  EXPECT_EQ(matcher.Push("one S").text, "one ");
  EXPECT_EQ(matcher.Push("T").text, "");
  auto out = matcher.Push("OP and more");
  EXPECT_EQ(out.text, "");
  ASSERT_TRUE(out.matched_stop.has_value());
  EXPECT_EQ(*out.matched_stop, "STOP");
  EXPECT_TRUE(matcher.stopped());
  EXPECT_EQ(matcher.Push("ignored").text, "");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, TextBeforeTheStopInTheSameChunkIsEmitted) {
  StopStringMatcher matcher({"\n\n"});
  auto out = matcher.Push("line one\n\nline two");
  EXPECT_EQ(out.text, "line one");
  EXPECT_EQ(*out.matched_stop, "\n\n");
}

TEST(StopStringMatcherTest, EarliestOfSeveralStopStringsWins) {
  StopStringMatcher matcher({"world", "lo w", "xyz"});
  auto out = matcher.Push("hello world");
  EXPECT_EQ(out.text, "hel");
  EXPECT_EQ(*out.matched_stop, "lo w");
}

TEST(StopStringMatcherTest, HoldsBackTheLongestPossibleStopPrefix) {
  StopStringMatcher matcher({"abc", "xabd"});
  EXPECT_EQ(matcher.Push("1xab").text, "1");  // "xab" may become "xabd", "ab" may become "abc"
  auto out = matcher.Push("c");
  EXPECT_EQ(out.text, "x");
  EXPECT_EQ(*out.matched_stop, "abc");
}

TEST(StopStringMatcherTest, FlushReturnsHeldTextWhenTheStreamEnds) {
  StopStringMatcher matcher({"</answer>"});
  EXPECT_EQ(matcher.Push("42</ans").text, "42");
  EXPECT_EQ(matcher.Flush(), "</ans");
}

TEST(StopStringMatcherTest, IncludeStopStringEmitsEverythingUpToTheStopEnd) {
  StopStringMatcher matcher({"STOP"}, /*include_stop_str_in_output=*/true);
  EXPECT_EQ(matcher.Push("one ST").text, "one ST");  // nothing held back, as in vLLM
  auto out = matcher.Push("OP tail");
  EXPECT_EQ(out.text, "OP");
  EXPECT_EQ(*out.matched_stop, "STOP");
}

TEST(StopStringMatcherTest, NoStopStringsPassesTextThrough) {
  StopStringMatcher matcher({});
  EXPECT_EQ(matcher.Push("anything").text, "anything");
  EXPECT_EQ(matcher.Flush(), "");
}

TEST(StopStringMatcherTest, UnicodeStopStringAcrossChunks) {
  StopStringMatcher matcher({"\xF0\x9F\xA6\x99!"});  // "🦙!"
  EXPECT_EQ(matcher.Push("a \xF0\x9F\xA6\x99").text, "a ");
  auto out = matcher.Push("!b");
  EXPECT_EQ(out.text, "");
  EXPECT_TRUE(out.matched_stop.has_value());
}

// vLLM's min_tokens rule (v1 detokenizer, stop_check_offset): a stop string may not end in the
// text of the first min_tokens tokens; one that starts there and ends later does match.
TEST(StopStringMatcherTest, TextOfTheFirstMinTokensCannotEndAStop) {
  StopStringMatcher matcher({"\n"});
  EXPECT_EQ(matcher.Push("a\nb", /*may_stop=*/false).text, "a\nb");
  auto out = matcher.Push("c\nd", /*may_stop=*/true);
  EXPECT_EQ(out.text, "c");
  EXPECT_EQ(*out.matched_stop, "\n");
}

TEST(StopStringMatcherTest, AStopStartingInMinTokensTextAndEndingLaterMatches) {
  StopStringMatcher matcher({"END"});
  EXPECT_EQ(matcher.Push("xEN", /*may_stop=*/false).text, "x");
  auto out = matcher.Push("D!", /*may_stop=*/true);
  EXPECT_EQ(out.text, "");
  EXPECT_EQ(*out.matched_stop, "END");
}

TEST(StopStringMatcherTest, IncludeModeIgnoresAStopWhollyInMinTokensText) {
  StopStringMatcher matcher({"ab", "xxxxx"}, /*include_stop_str_in_output=*/true);
  EXPECT_EQ(matcher.Push("zabz", /*may_stop=*/false).text, "zabz");
  auto none = matcher.Push("q");
  EXPECT_EQ(none.text, "q");
  EXPECT_FALSE(none.matched_stop.has_value());
  auto out = matcher.Push("-ab-");
  EXPECT_EQ(out.text, "-ab");
  EXPECT_EQ(*out.matched_stop, "ab");
}

}  // namespace
}  // namespace tandem::text
