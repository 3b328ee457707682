// ReadTokenizerJson: model.vocab and model.merges streamed into vectors, the rest a DOM; the
// refusals name the piece or the merge's rank. Counts of the real Qwen3 file are those Python's
// json module reads from it (151643 vocab entries, 151387 merges, 26 added tokens).
#include "text/tokenizer_json_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing.h"
#include "text/hf_tokenizer_loader.h"
#include "text/tokenizer_json.h"

namespace tandem::text {
namespace {

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

Status ReadError(const std::string& text) {
  auto file = ReadTokenizerJson(WriteFile("bad_tokenizer.json", text));
  EXPECT_FALSE(file.ok()) << text;
  return file.ok() ? Status::Ok() : file.status();
}

TEST(TokenizerJsonReaderTest, VocabAndMergesComeInFileOrderAndTheRestIsADom) {
  const auto file = ReadTokenizerJson(WriteFile("tokenizer.json", R"({
    "version": "1.0", "vocab": {"not": "the model's"},
    "added_tokens": [{"id": 3, "content": "<s>", "special": true}],
    "model": {"type": "BPE", "dropout": null, "vocab": {"b": 1, "a": 0, "ab": 2},
              "merges": ["a b", ["ab", "b"]], "ignore_merges": false},
    "decoder": {"type": "ByteLevel", "merges": ["x y"]}})"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE(file->has_vocab);
  EXPECT_TRUE(file->has_merges);
  const std::vector<std::pair<std::string, int64_t>> vocab = {{"b", 1}, {"a", 0}, {"ab", 2}};
  EXPECT_EQ(file->vocab, vocab);
  const std::vector<std::pair<std::string, std::string>> merges = {{"a", "b"}, {"ab", "b"}};
  EXPECT_EQ(file->merges, merges);
  const nlohmann::json& root = file->root;
  EXPECT_TRUE(root["model"]["vocab"].is_null());
  EXPECT_TRUE(root["model"]["merges"].is_null());
  EXPECT_EQ(root["model"]["type"], "BPE");
  EXPECT_EQ(root["model"]["ignore_merges"], false);
  EXPECT_TRUE(root["model"].contains("dropout"));
  // Only the model's tables are taken: same-named keys elsewhere stay in the DOM.
  EXPECT_EQ(root["vocab"]["not"], "the model's");
  EXPECT_EQ(root["decoder"]["merges"], nlohmann::json::array({"x y"}));
  EXPECT_EQ(root["added_tokens"][0]["content"], "<s>");
  EXPECT_EQ(root["version"], "1.0");
}

TEST(TokenizerJsonReaderTest, TablesOfAnotherShapeStayInTheDom) {
  auto file = ReadTokenizerJson(
      WriteFile("odd_tokenizer.json", R"({"model": {"vocab": [["a", 0]], "merges": {"a": 1}}})"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_FALSE(file->has_vocab);
  EXPECT_FALSE(file->has_merges);
  EXPECT_EQ(file->root["model"]["vocab"][0][0], "a");
  EXPECT_EQ(file->root["model"]["merges"]["a"], 1);
  TokenizerJsonFile odd = *file;
  const auto merges = TakeMerges(&odd, "odd_tokenizer.json");
  ASSERT_FALSE(merges.ok());
  EXPECT_EQ(merges.status().message(), "'odd_tokenizer.json': model.merges should be a list");
}

TEST(TokenizerJsonReaderTest, TakeMergesMovesThemOutAndNoMergesIsNone) {
  auto file = ReadTokenizerJson(
      WriteFile("merges_tokenizer.json", R"({"model": {"vocab": {}, "merges": ["a b"]}})"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto merges = TakeMerges(&*file, "merges_tokenizer.json");
  ASSERT_TRUE(merges.ok());
  EXPECT_EQ(*merges, (std::vector<std::pair<std::string, std::string>>{{"a", "b"}}));
  auto none = ReadTokenizerJson(WriteFile("no_merges_tokenizer.json", R"({"model": {}})"));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->has_vocab);
  auto no_merges = TakeMerges(&*none, "no_merges_tokenizer.json");
  ASSERT_TRUE(no_merges.ok());
  EXPECT_TRUE(no_merges->empty());
}

TEST(TokenizerJsonReaderTest, ABadEntryIsRefusedNamingThePieceOrTheMergeRank) {
  struct Case {
    const char* text;
    const char* needle;
  };
  for (const Case& c : {
           Case{R"({"model": {"vocab": {"a": 0, "b": "1"}}})",
                R"(model.vocab["b"] should be an integer id, not a string)"},
           Case{R"({"model": {"vocab": {"a": 0.5}}})", R"(model.vocab["a"] should be an integer)"},
           Case{R"({"model": {"vocab": {"a": {"id": 0}}}})", "not an object"},
           Case{R"({"model": {"merges": ["a b", "a b c"]}})",
                R"(merge #1 "a b c" should be two pieces separated by one space)"},
           Case{R"({"model": {"merges": ["ab"]}})", "merge #0 \"ab\" should be two pieces"},
           Case{R"({"model": {"merges": [["a"]]}})",
                R"(merge #0 should be "a b" or ["a", "b"], not an array of 1 strings)"},
           Case{R"({"model": {"merges": [["a", "b", "c"]]}})", "not an array of more than two"},
           Case{R"({"model": {"merges": [["a", 1]]}})", "not an array holding a number"},
           Case{R"({"model": {"merges": ["a b", 7]}})", "merge #1 should be \"a b\""},
           Case{R"({"model": {"merges": [{"a": "b"}]}})", "not an object"},
           Case{R"({"model": {"vocab": {"a": 0})", "is not valid JSON"},
       }) {
    const Status status = ReadError(c.text);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(status.message().find(c.needle), std::string::npos)
        << c.text << " → " << status.message();
    EXPECT_NE(status.message().find("bad_tokenizer.json"), std::string::npos) << status.message();
  }
}

// Each of these made the loaders throw nlohmann::type_error out of `tandem tokenize` and
// `tandem serve` (SIGABRT); a hostile-input pass found them.
TEST(TokenizerJsonReaderTest, ABadAddedTokenIsRefusedNamingItsField) {
  struct Case {
    const char* added_tokens;
    const char* needle;
  };
  for (const Case& c : {
           Case{R"([{"id": "x", "content": "<s>"}])", "added_tokens[0].id should be an integer"},
           Case{R"([{"id": null, "content": "<s>"}])", "added_tokens[0].id should be an integer"},
           Case{R"([{"id": 0.5, "content": "<s>"}])", "added_tokens[0].id should be an integer"},
           Case{R"([{"id": 1, "content": "<s>"}, {"id": 2, "content": 5}])",
                "added_tokens[1].content should be a string"},
           Case{R"([{"id": 1}])", "added_tokens[0].content should be a string"},
           Case{R"([{"id": 1, "content": "<s>", "special": "yes"}])",
                "added_tokens[0].special should be true or false"},
           Case{R"([5])", R"(added_tokens[0] should be an object {"id", "content", ...})"},
           Case{R"({"a": 1})", "added_tokens should be a list"},
       }) {
    const nlohmann::json root =
        nlohmann::json::parse(std::string(R"({"added_tokens": )") + c.added_tokens + "}");
    const auto added = ReadAddedTokens(root, "t.json");
    ASSERT_FALSE(added.ok()) << c.added_tokens;
    EXPECT_EQ(added.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(added.status().message(), std::string("'t.json': ") + c.needle) << c.added_tokens;
  }
  // Both loaders refuse such a file instead of throwing.
  for (const char* pre_tokenizer : {"null", R"({"type": "ByteLevel"})"}) {
    const std::string path =
        WriteFile("bad_added_tokenizer.json",
                  std::string(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},)") +
                      R"("pre_tokenizer": )" + pre_tokenizer +
                      R"(, "added_tokens": [{"id": "x", "content": "<s>"}]})");
    const auto tokenizer = LoadHfTokenizerJson(path, "");
    ASSERT_FALSE(tokenizer.ok()) << pre_tokenizer;
    EXPECT_NE(tokenizer.status().message().find("added_tokens[0].id should be an integer"),
              std::string::npos)
        << tokenizer.status().message();
  }
}

TEST(TokenizerJsonReaderTest, AddedTokensAreReadWithTheirFlags) {
  const nlohmann::json root = nlohmann::json::parse(
      R"({"added_tokens": [{"id": 7, "content": "<s>", "special": true}, {"id": 8, "content": "x"}]})");
  auto added = ReadAddedTokens(root, "t.json");
  ASSERT_TRUE(added.ok()) << added.status().message();
  ASSERT_EQ(added->size(), 2u);
  EXPECT_EQ((*added)[0].content, "<s>");
  EXPECT_EQ((*added)[0].id, 7);
  EXPECT_TRUE((*added)[0].special);
  EXPECT_EQ((*added)[1].id, 8);
  EXPECT_FALSE((*added)[1].special);
  auto none = ReadAddedTokens(nlohmann::json::object(), "t.json");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(TokenizerJsonReaderTest, AMissingFileIsNotFound) {
  const auto file = ReadTokenizerJson("/nonexistent/tokenizer.json");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("/nonexistent/tokenizer.json"), std::string::npos);
}

TEST(TokenizerJsonReaderTest, Qwen3TablesHaveWhatPythonReadsFromTheFile) {
  const auto file = ReadTokenizerJson(testing::SharedPath("models/qwen3-tokenizer/tokenizer.json"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->vocab.size(), 151643u);
  ASSERT_EQ(file->merges.size(), 151387u);
  EXPECT_EQ(file->root["added_tokens"].size(), 26u);
  EXPECT_EQ(file->vocab.front(), (std::pair<std::string, int64_t>{"!", 0}));
  EXPECT_EQ(file->vocab.back(),
            (std::pair<std::string, int64_t>{"\xC3\xA2\xC2\xBD\xC4\xB9", 151642}));
  EXPECT_EQ(file->merges.front(), (std::pair<std::string, std::string>{"\xC4\xA0", "\xC4\xA0"}));
  EXPECT_EQ(file->merges.back(),
            (std::pair<std::string, std::string>{"\xC3\xA2\xC2\xBD", "\xC4\xB9"}));
}

}  // namespace
}  // namespace tandem::text
