// The Qwen3 byte-level BPE tokenizer against llama.cpp's qwen2 vectors and our Qwen3 goldens,
// from tokenizer.json and from the tiny-qwen3 GGUF metadata.
#include "text/byte_level_bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <thread>

#include "testing.h"
#include "text/byte_level_alphabet.h"
#include "text/incremental_detokenizer.h"
#include "text/nfc_normalizer.h"
#include "text/regex_splitter.h"
#include "text/utf8.h"

namespace tandem::text {
namespace {

using testing::LlamaCppVocabCases;
using testing::Qwen3GoldenCases;
using testing::Qwen3Tokenizer;
using testing::TinyQwen3GgufTokenizer;

const ByteLevelBpeTokenizer& AsByteLevel(const Tokenizer& tokenizer) {
  const auto* byte_level = dynamic_cast<const ByteLevelBpeTokenizer*>(&tokenizer);
  if (byte_level == nullptr) throw std::runtime_error("not a ByteLevelBpeTokenizer");
  return *byte_level;
}

TEST(ByteLevelAlphabetTest, MapsBytesLikeGpt2) {
  EXPECT_EQ(ByteLevelEncode(" the\n"), "\xC4\xA0the\xC4\x8A");  // "Ġthe" + "Ċ"
  EXPECT_EQ(ByteLevelCharOf('!'), "!");
  EXPECT_EQ(ByteLevelCharOf(0xFF), "\xC3\xBF");  // 'ÿ' maps to itself
  EXPECT_EQ(ByteLevelCharOf(0xAD), "\xC5\x83");  // soft hyphen: the 68th remapped byte U+0143
  for (int byte = 0; byte < 256; ++byte) {
    std::string raw(1, static_cast<char>(byte));
    std::string decoded;
    EXPECT_TRUE(ByteLevelDecode(ByteLevelEncode(raw), &decoded)) << byte;
    EXPECT_EQ(decoded, raw);
  }
}

TEST(NfcNormalizerTest, ComposesCombiningMarksAndLeavesNfcTextAlone) {
  EXPECT_EQ(NormalizeNfc("e\xCC\x81"), "\xC3\xA9");                     // e + U+0301 -> é
  EXPECT_EQ(NormalizeNfc("\xE1\x84\x80\xE1\x85\xA1"), "\xEA\xB0\x80");  // jamo -> 가
  EXPECT_EQ(NormalizeNfc("plain \xC3\xA9 text"), "plain \xC3\xA9 text");
}

TEST(RegexSplitterTest, IsolatedKeepsMatchesAndGapsAsPieces) {
  auto splitter = RegexSplitter::Create("\\p{N}+");
  ASSERT_TRUE(splitter.ok());
  std::vector<std::string_view> pieces;
  (*splitter)->Split("ab12c3", &pieces);
  EXPECT_EQ(pieces, (std::vector<std::string_view>{"ab", "12", "c", "3"}));
  EXPECT_FALSE(RegexSplitter::Create("(unclosed").ok());
}

TEST(RegexSplitterTest, TwelveMillionSpacesSplitLikeHfInsteadOfAborting) {
  // Qwen's pattern: \s*[\r\n]+ backtracks over the whole run before \s+(?!\S) takes it,
  // which passed PCRE2's default 10M-step limit (the process aborted on a 10 MB prompt).
  auto splitter = RegexSplitter::Create(
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}"
      "\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+");
  ASSERT_TRUE(splitter.ok()) << splitter.status().message();
  const std::string text = "hi" + std::string(12'000'000, ' ') + "x";
  std::vector<std::string_view> pieces;
  (*splitter)->Split(text, &pieces);
  // As HF splits it: "hi"; the run but its last space (\s+(?!\S)); " x" ([^\r\n...]?\p{L}+).
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0], "hi");
  EXPECT_EQ(pieces[1].size(), 11'999'999u);
  EXPECT_EQ(pieces[2], " x");
}

TEST(Qwen3TokenizerTest, VocabFactsMatchTheTokenizerFiles) {
  const Tokenizer& tokenizer = Qwen3Tokenizer();
  EXPECT_EQ(tokenizer.vocab_size(), 151669);
  EXPECT_EQ(tokenizer.bos_token_id(), -1);
  EXPECT_FALSE(tokenizer.add_bos());
  EXPECT_EQ(tokenizer.eos_token_id(), 151645);
  EXPECT_EQ(tokenizer.eos_token(), "<|im_end|>");
  EXPECT_EQ(tokenizer.IdToPiece(198), "\xC4\x8A");  // "Ċ"
  EXPECT_EQ(tokenizer.TokenBytes(198), "\n");
  EXPECT_TRUE(tokenizer.IsSpecial(151644));   // <|im_start|>: special
  EXPECT_FALSE(tokenizer.IsSpecial(151667));  // <think>: added but not special
  EXPECT_FALSE(tokenizer.IsSpecial(9707));
  EXPECT_FALSE(tokenizer.decode_strips_leading_space());
}

TEST(Qwen3TokenizerTest, EncodesAllLlamaCppQwen2Vectors) {
  auto cases = LlamaCppVocabCases("qwen2");
  ASSERT_EQ(cases.size(), 46u);
  for (const auto& [text, ids] : cases) {
    EXPECT_EQ(Qwen3Tokenizer().Encode(text, /*add_special_tokens=*/true), ids) << "text: " << text;
  }
}

TEST(Qwen3TokenizerTest, EncodesGoldenStringsWithAndWithoutAddedTokenMatching) {
  const auto& byte_level = AsByteLevel(Qwen3Tokenizer());
  for (const auto& golden : Qwen3GoldenCases("strings")) {
    std::string text = golden["text"];
    EXPECT_EQ(byte_level.Encode(text, true),
              golden["ids_parse_special"].get<std::vector<int32_t>>())
        << text;
    EXPECT_EQ(byte_level.EncodeText(text, true, /*match_added_tokens=*/false),
              golden["ids_no_special"].get<std::vector<int32_t>>())
        << text;
  }
}

TEST(Qwen3TokenizerTest, EncodesRenderedChatTemplates) {
  for (const auto& golden : Qwen3GoldenCases("chat_cases")) {
    EXPECT_EQ(Qwen3Tokenizer().Encode(golden["text"].get<std::string>(), true),
              golden["ids_parse_special"].get<std::vector<int32_t>>())
        << golden["case"];
  }
}

TEST(Qwen3TokenizerTest, DecodeRestoresTextAndSkipsOnlySpecialTokens) {
  const Tokenizer& tokenizer = Qwen3Tokenizer();
  for (const auto& golden : Qwen3GoldenCases("strings")) {
    auto ids = golden["ids_parse_special"].get<std::vector<int32_t>>();
    EXPECT_EQ(tokenizer.Decode(ids, false), golden["text"].get<std::string>());
  }
  std::vector<int32_t> ids = {151644, 872, 198, 6023, 151645, 198, 151667, 271, 151668};
  EXPECT_EQ(tokenizer.Decode(ids, /*skip_special_tokens=*/true), "user\nhi\n<think>\n\n</think>");
  EXPECT_EQ(tokenizer.Decode(ids, false), "<|im_start|>user\nhi<|im_end|>\n<think>\n\n</think>");
}

TEST(Qwen3TokenizerTest, DecomposedTextEncodesLikeItsNfcForm) {
  const Tokenizer& tokenizer = Qwen3Tokenizer();
  EXPECT_EQ(tokenizer.Encode("Cafe\xCC\x81", false), tokenizer.Encode("Caf\xC3\xA9", false));
}

TEST(Qwen3TokenizerTest, InvalidUtf8IsEncodedAsReplacementCharacter) {
  const Tokenizer& tokenizer = Qwen3Tokenizer();
  EXPECT_EQ(tokenizer.Encode("a\xFF"
                             "b",
                             false),
            tokenizer.Encode("a\xEF\xBF\xBD"
                             "b",
                             false));
}

TEST(Qwen3TokenizerTest, StreamingChineseAndEmojiTokenByTokenGivesWholeCharacters) {
  const Tokenizer& tokenizer = Qwen3Tokenizer();
  // "你好，世界！ 🦙 llama 😀!": the llama emoji after a space is split over three
  // byte-level tokens (golden "x**2  # 🦙" ends with " #" 671, then 11162, 99, 247), none a whole
  // character.
  const std::string text =
      "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xEF\xBC\x81 "
      "\xF0\x9F\xA6\x99 llama \xF0\x9F\x98\x80!";
  std::vector<int32_t> ids = tokenizer.Encode(text, false);
  IncrementalDetokenizer detokenizer(tokenizer, {}, /*skip_special_tokens=*/true);
  std::string streamed;
  int num_empty_pushes = 0;
  for (int32_t id : ids) {
    std::string delta = detokenizer.Push(id);
    EXPECT_EQ(SanitizeUtf8(delta), delta) << "a push returned a partial character";
    num_empty_pushes += delta.empty();
    streamed += delta;
  }
  streamed += detokenizer.Flush();
  EXPECT_EQ(streamed, text);
  EXPECT_GT(num_empty_pushes, 0);  // bytes of an unfinished emoji were held back
}

TEST(Qwen3TokenizerTest, ConcurrentEncodesAgreeAndFillTheWordCache) {
  const auto& byte_level = AsByteLevel(Qwen3Tokenizer());
  const std::string text = "The quick brown fox jumps over the lazy dog, again and again.";
  std::vector<int32_t> expected = byte_level.Encode(text, false);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) mismatches[t] += byte_level.Encode(text, false) != expected;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  EXPECT_GT(byte_level.num_cached_words(), 0u);
}

TEST(TinyQwen3GgufTokenizerTest, GivesTheSameIdsAsTokenizerJson) {
  const Tokenizer& gguf = TinyQwen3GgufTokenizer();
  EXPECT_EQ(gguf.vocab_size(), 151936);  // padded with [PAD...] unused ids
  EXPECT_FALSE(gguf.add_bos());
  EXPECT_EQ(gguf.eos_token_id(), 151645);
  EXPECT_EQ(gguf.TokenBytes(151700), "");  // [PAD151700] has no text
  for (const auto& golden : Qwen3GoldenCases("strings")) {
    EXPECT_EQ(gguf.Encode(golden["text"].get<std::string>(), true),
              golden["ids_parse_special"].get<std::vector<int32_t>>())
        << golden["text"];
  }
  for (const auto& golden : Qwen3GoldenCases("chat_cases")) {
    EXPECT_EQ(gguf.Encode(golden["text"].get<std::string>(), true),
              golden["ids_parse_special"].get<std::vector<int32_t>>());
  }
  for (const auto& [text, ids] : LlamaCppVocabCases("qwen2")) {
    EXPECT_EQ(gguf.Encode(text, true), ids) << "text: " << text;
  }
}

TEST(GgufByteLevelVocabTest, UnknownPreTokenizerNameIsUnimplemented) {
  auto patterns = ByteLevelPatternsForGgufPre("deepseek-coder");
  ASSERT_FALSE(patterns.ok());
  EXPECT_EQ(patterns.status().code(), StatusCode::kUnimplemented);
}

TEST(ByteLevelBpeTokenizerTest, MergeOfUnknownPieceIsAnError) {
  ByteLevelBpeVocab vocab;
  vocab.tokens = {"a", "b"};
  vocab.merges = {{"a", "b"}};  // "ab" is not a token
  auto tokenizer = ByteLevelBpeTokenizer::Create(vocab);
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_NE(tokenizer.status().message().find("\"ab\""), std::string::npos)
      << tokenizer.status().message();
}

}  // namespace
}  // namespace tandem::text
