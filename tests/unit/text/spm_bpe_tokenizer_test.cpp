// The stories260k SentencePiece-BPE tokenizer, loaded from the GGUF vocab and from the HF
// tokenizer.json, against the golden encodings and texts in stories260K.golden.json.
#include "text/spm_bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing.h"

namespace tandem::text {
namespace {

using testing::StoriesGoldenCases;

class StoriesTokenizerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    tokenizer_ = GetParam() == "gguf" ? testing::MakeGgufStoriesTokenizer()
                                      : testing::MakeHfStoriesTokenizer();
    ASSERT_NE(tokenizer_, nullptr);
  }
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_P(StoriesTokenizerTest, VocabFactsMatchTheModelCard) {
  EXPECT_EQ(tokenizer_->vocab_size(), 512);
  EXPECT_EQ(tokenizer_->bos_token_id(), 1);
  EXPECT_EQ(tokenizer_->eos_token_id(), 2);
  EXPECT_EQ(tokenizer_->bos_token(), "<s>");
  EXPECT_EQ(tokenizer_->eos_token(), "</s>");
  EXPECT_TRUE(tokenizer_->add_bos());
  EXPECT_TRUE(tokenizer_->IsSpecial(1));
  EXPECT_TRUE(tokenizer_->IsSpecial(2));
  EXPECT_FALSE(tokenizer_->IsSpecial(403));
  EXPECT_EQ(tokenizer_->IdToPiece(13), "<0x0A>");
}

TEST_P(StoriesTokenizerTest, EncodesEveryGoldenStringWithoutBos) {
  const auto& cases = testing::StoriesGoldenCaseMap("tokenize_no_bos");
  ASSERT_GE(cases.size(), 6u);
  for (auto it = cases.begin(); it != cases.end(); ++it) {
    EXPECT_EQ(tokenizer_->Encode(it.key(), false), it.value().get<std::vector<int32_t>>())
        << "text: " << it.key();
  }
}

TEST_P(StoriesTokenizerTest, EncodesEveryGenerationPromptWithBos) {
  for (const auto& gen : StoriesGoldenCases("generation")) {
    EXPECT_EQ(tokenizer_->Encode(gen["prompt"].get<std::string>(), true),
              gen["prompt_ids"].get<std::vector<int32_t>>())
        << "prompt: " << gen["prompt"];
  }
}

TEST_P(StoriesTokenizerTest, DecodesEveryGenerationToItsGoldenText) {
  for (const auto& gen : StoriesGoldenCases("generation")) {
    auto ids = gen["all_ids_after_bos"].get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer_->Decode(ids, true), gen["text"].get<std::string>());
    // BOS in front is skipped and the leading space after it is still stripped.
    ids.insert(ids.begin(), 1);
    EXPECT_EQ(tokenizer_->Decode(ids, true), gen["text"].get<std::string>());
  }
}

TEST_P(StoriesTokenizerTest, EncodeThenDecodeRoundTripsText) {
  for (std::string text : {"Once upon a time", "a\nb", "  two spaces", "\xF0\x9F\xA6\x99 llama",
                           "Lily's mom said, \"Lily, let's go.\""}) {
    EXPECT_EQ(tokenizer_->Decode(tokenizer_->Encode(text, true), true), text);
  }
}

TEST_P(StoriesTokenizerTest, EmptyTextIsOnlyBos) {
  EXPECT_EQ(tokenizer_->Encode("", true), std::vector<int32_t>{1});
  EXPECT_TRUE(tokenizer_->Encode("", false).empty());
}

TEST_P(StoriesTokenizerTest, SpecialTokenTextMapsToItsId) {
  std::vector<int32_t> once = tokenizer_->Encode("Once", false);
  std::vector<int32_t> expected = once;
  expected.push_back(2);
  EXPECT_EQ(tokenizer_->Encode("Once</s>", false), expected);
}

TEST_P(StoriesTokenizerTest, SkipSpecialTokensControlsBosAndEosText) {
  std::vector<int32_t> ids = {1, 403, 2};
  EXPECT_EQ(tokenizer_->Decode(ids, true), "Once");
  // As HF: the leading-space strip applies to the start of the text, which is now "<s>".
  EXPECT_EQ(tokenizer_->Decode(ids, false), "<s> Once</s>");
}

TEST_P(StoriesTokenizerTest, IncompleteByteSequenceDecodesToReplacementChar) {
  // <0xF0> <0x9F> are the first two bytes of a 4-byte emoji.
  EXPECT_EQ(tokenizer_->Decode({243, 162}, true), "\xEF\xBF\xBD");
  EXPECT_EQ(tokenizer_->Decode({243, 162, 169, 156}, true), "\xF0\x9F\xA6\x99");
}

INSTANTIATE_TEST_SUITE_P(GgufAndHf, StoriesTokenizerTest, ::testing::Values("gguf", "hf"));

TEST(HfTokenizerLoaderTest, MissingFileIsNotFound) {
  auto tokenizer = LoadHfTokenizerJson("/nonexistent/tokenizer.json", "");
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_EQ(tokenizer.status().code(), StatusCode::kNotFound);
}

TEST(HfTokenizerLoaderTest, ByteLevelTokenizerJsonLoadsAsByteLevelBpe) {
  // The shape of Qwen's tokenizer.json, shrunk (the real file takes ~1 s to parse): "\u0120" is
  // the byte-level alphabet's space 'Ġ'. Merges in both formats.
  std::string path = ::testing::TempDir() + "/byte_level_tokenizer.json";
  std::ofstream(path) << R"({"model": {"type": "BPE",
          "vocab": {"a": 0, "b": 1, "\u0120": 2, "ab": 3, "\u0120ab": 4},
          "merges": [["a", "b"], "\u0120 ab"]},
      "added_tokens": [{"id": 5, "content": "<|end|>", "special": true}],
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
          {"type": "Split", "pattern": {"Regex": " ?[a-z]+|\\s+"}, "behavior": "Isolated"},
          {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
      "decoder": {"type": "ByteLevel"}})";
  auto tokenizer = LoadHfTokenizerJson(path, "");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  EXPECT_EQ((*tokenizer)->Encode("ab ab<|end|>", true), (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ((*tokenizer)->Decode({3, 4, 5}, /*skip_special_tokens=*/true), "ab ab");
  EXPECT_FALSE((*tokenizer)->add_bos());
}

TEST(SpmBpeTokenizerTest, MismatchedScoresAreRejected) {
  SpmVocab vocab;
  vocab.tokens = {"<unk>", "a"};
  vocab.scores = {0.0f};
  vocab.add_bos = false;
  auto tokenizer = SpmBpeTokenizer::Create(vocab);
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_EQ(tokenizer.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tandem::text
