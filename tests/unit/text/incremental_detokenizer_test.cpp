#include "text/incremental_detokenizer.h"

#include <gtest/gtest.h>

#include "testing.h"

namespace tandem::text {
namespace {

std::string StreamAll(const Tokenizer& tokenizer, const std::vector<int32_t>& prompt_ids,
                      const std::vector<int32_t>& generated_ids, std::vector<std::string>* chunks) {
  IncrementalDetokenizer detokenizer(tokenizer, prompt_ids, /*skip_special_tokens=*/true);
  std::string text;
  for (int32_t id : generated_ids) {
    chunks->push_back(detokenizer.Push(id));
    text += chunks->back();
  }
  text += detokenizer.Flush();
  return text;
}

class IncrementalDetokenizerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Tokenizer> tokenizer_ = testing::MakeGgufStoriesTokenizer();
};

TEST_F(IncrementalDetokenizerTest, StreamingEveryGoldenGenerationGivesDecodedText) {
  for (const auto& gen : testing::StoriesGoldenCases("generation")) {
    auto prompt_ids = gen["prompt_ids"].get<std::vector<int32_t>>();
    auto generated_ids = gen["generated_ids"].get<std::vector<int32_t>>();
    std::vector<int32_t> all_ids = prompt_ids;
    all_ids.insert(all_ids.end(), generated_ids.begin(), generated_ids.end());
    std::string prompt_text = tokenizer_->Decode(prompt_ids, true);
    std::string full_text = tokenizer_->Decode(all_ids, true);
    std::vector<std::string> chunks;
    EXPECT_EQ(StreamAll(*tokenizer_, prompt_ids, generated_ids, &chunks),
              full_text.substr(prompt_text.size()))
        << "prompt: " << gen["prompt"];
    // The golden text is prompt text + streamed completion.
    EXPECT_EQ(prompt_text + StreamAll(*tokenizer_, prompt_ids, generated_ids, &chunks),
              gen["text"].get<std::string>());
  }
}

TEST_F(IncrementalDetokenizerTest, FirstTokenAfterBosLosesItsLeadingSpace) {
  IncrementalDetokenizer detokenizer(*tokenizer_, {1}, true);
  EXPECT_EQ(detokenizer.Push(403), "Once");  // "▁Once"
}

TEST_F(IncrementalDetokenizerTest, TokensAfterANonEmptyPromptKeepTheirSpace) {
  // "Once upon a time" then "," then "▁there".
  IncrementalDetokenizer detokenizer(*tokenizer_, {1, 403, 407, 261, 378}, true);
  std::string text = detokenizer.Push(432);
  text += detokenizer.Push(383);
  EXPECT_EQ(text, ", there");
}

TEST_F(IncrementalDetokenizerTest, EmojiBytePiecesAppearOnlyWhenTheCodepointCompletes) {
  // "🦙" = F0 9F A6 99 = byte pieces 243 162 169 156, after "▁" (410) following a word.
  IncrementalDetokenizer detokenizer(*tokenizer_, {1, 403}, true);
  EXPECT_EQ(detokenizer.Push(410), " ");
  EXPECT_EQ(detokenizer.Push(243), "");
  EXPECT_EQ(detokenizer.Push(162), "");
  EXPECT_EQ(detokenizer.Push(169), "");
  EXPECT_EQ(detokenizer.Push(156), "\xF0\x9F\xA6\x99");
  EXPECT_EQ(detokenizer.Flush(), "");
}

TEST_F(IncrementalDetokenizerTest, InvalidBytesBecomeReplacementCharacters) {
  IncrementalDetokenizer detokenizer(*tokenizer_, {1}, true);
  EXPECT_EQ(detokenizer.Push(243), "");  // F0: start of a 4-byte sequence
  EXPECT_EQ(detokenizer.Push(68),
            "\xEF\xBF\xBD"
            "A");  // 'A' (0x41) cannot continue it
  EXPECT_EQ(detokenizer.Push(243), "");
  EXPECT_EQ(detokenizer.Flush(), "\xEF\xBF\xBD");  // stream ended mid-character
}

TEST_F(IncrementalDetokenizerTest, SpecialTokensAreSkippedOrShown) {
  IncrementalDetokenizer skipping(*tokenizer_, {1}, true);
  EXPECT_EQ(skipping.Push(2), "");
  IncrementalDetokenizer showing(*tokenizer_, {1}, false);
  EXPECT_EQ(showing.Push(403), " Once");  // "<s>" already started the text
  EXPECT_EQ(showing.Push(2), "</s>");
}

TEST_F(IncrementalDetokenizerTest, IdsOutsideTheVocabGiveNoText) {
  IncrementalDetokenizer detokenizer(*tokenizer_, {1}, true);
  EXPECT_EQ(detokenizer.Push(100000), "");
  EXPECT_EQ(detokenizer.Push(403), "Once");
}

}  // namespace
}  // namespace tandem::text
