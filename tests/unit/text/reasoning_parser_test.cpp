// ReasoningParser / PromptThinkState: the <think> split, decided from the prompt's tail.
#include "text/reasoning_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tandem::text {
namespace {

ReasoningDelta FeedAll(ThinkState start, const std::vector<std::string>& pieces) {
  ReasoningParser parser(start);
  ReasoningDelta all;
  for (const std::string& piece : pieces) {
    ReasoningDelta d = parser.Feed(piece);
    all.reasoning += d.reasoning;
    all.content += d.content;
  }
  ReasoningDelta d = parser.Finish();
  all.reasoning += d.reasoning;
  all.content += d.content;
  return all;
}

// Every split point of `text` into two pieces, and one char at a time, gives `expected`.
void ExpectSplitInvariant(ThinkState start, const std::string& text, const std::string& reasoning,
                          const std::string& content) {
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    ReasoningDelta d = FeedAll(start, {text.substr(0, cut), text.substr(cut)});
    EXPECT_EQ(d.reasoning, reasoning) << "cut " << cut;
    EXPECT_EQ(d.content, content) << "cut " << cut;
  }
  std::vector<std::string> chars;
  for (char c : text) chars.push_back(std::string(1, c));
  ReasoningDelta d = FeedAll(start, chars);
  EXPECT_EQ(d.reasoning, reasoning);
  EXPECT_EQ(d.content, content);
}

TEST(PromptThinkStateTest, Qwen3ThinkingOffPrefillIsClosed) {
  EXPECT_EQ(PromptThinkState("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
                             "<think>\n\n</think>\n\n"),
            ThinkState::kClosed);
}

TEST(PromptThinkStateTest, Qwen35ThinkingOnPrefillIsOpen) {
  EXPECT_EQ(PromptThinkState("<|im_start|>assistant\n<think>\n"), ThinkState::kOpen);
}

TEST(PromptThinkStateTest, Qwen3ThinkingOnHasNoBlock) {
  EXPECT_EQ(PromptThinkState("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"),
            ThinkState::kNone);
}

TEST(PromptThinkStateTest, ClosedBlockInHistoryDoesNotCloseTheNewTurn) {
  EXPECT_EQ(PromptThinkState("<|im_start|>assistant\n<think>\nx\n</think>\n\nok<|im_end|>\n"
                             "<|im_start|>user\nmore<|im_end|>\n<|im_start|>assistant\n"),
            ThinkState::kNone);
}

TEST(PromptThinkStateTest, ContinuedReasoningIsOpen) {
  EXPECT_EQ(PromptThinkState("<|im_start|>assistant\n<think>\nLet me think"), ThinkState::kOpen);
}

TEST(ReasoningParserTest, ModelOpensAndClosesTheBlock) {
  ExpectSplitInvariant(ThinkState::kNone, "<think>\nplan\n</think>\n\nanswer", "\nplan\n",
                       "\n\nanswer");
}

TEST(ReasoningParserTest, OpenPromptStartsInReasoning) {
  ExpectSplitInvariant(ThinkState::kOpen, "plan</think>answer", "plan", "answer");
}

TEST(ReasoningParserTest, ClosedPromptMakesEverythingContent) {
  ExpectSplitInvariant(ThinkState::kClosed, "<think>x</think>y", "", "<think>x</think>y");
}

TEST(ReasoningParserTest, NoTagsIsAllContent) {
  ExpectSplitInvariant(ThinkState::kNone, "just < an answer <b>", "", "just < an answer <b>");
}

TEST(ReasoningParserTest, UnclosedReasoningStaysReasoning) {
  ExpectSplitInvariant(ThinkState::kOpen, "still thinking </thi", "still thinking </thi", "");
}

TEST(ReasoningParserTest, HeldPartialTagIsReleasedWhenItIsNotATag) {
  ReasoningParser parser(ThinkState::kNone);
  ReasoningDelta d = parser.Feed("\n<th");
  EXPECT_EQ(d.content, "\n");
  d = parser.Feed("ing");
  EXPECT_EQ(d.content, "<thing");
  EXPECT_FALSE(parser.saw_reasoning());
}

TEST(ReasoningParserTest, ATagAfterContentIsContent) {
  // A structured output's JSON may hold the tags as text (issue 31): the block opens the output
  // or not at all.
  ExpectSplitInvariant(ThinkState::kNone, R"({"<think>":"</think>"})", "",
                       R"({"<think>":"</think>"})");
  ExpectSplitInvariant(ThinkState::kNone, "a <think>b</think>c", "", "a <think>b</think>c");
  ExpectSplitInvariant(ThinkState::kNone, " \n<think>r</think>c", "r", " \nc");
}

TEST(ReasoningParserTest, MultiByteTextIsNeverSplit) {
  const std::string text = "<think>é思考</think>答え";
  ExpectSplitInvariant(ThinkState::kNone, text, "é思考", "答え");
  ReasoningParser parser(ThinkState::kNone);
  ReasoningDelta d = parser.Feed("<think>思");
  EXPECT_EQ(d.reasoning, "思");
}

TEST(ReasoningParserTest, TextAfterTheBlockKeepsLiteralTags) {
  ExpectSplitInvariant(ThinkState::kOpen, "r</think>c<think>d", "r", "c<think>d");
}

}  // namespace
}  // namespace tandem::text
