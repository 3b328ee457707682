#include "server/openai/forced_tool_call_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tandem::server::openai {
namespace {

// Feeds `text` one piece of `piece` bytes at a time; returns every call as (name, arguments)
// rebuilt from the deltas, checking that each call starts (has its name) in its first delta.
std::vector<std::pair<std::string, std::string>> Rebuild(ForcedToolCallStream& stream,
                                                         const std::string& text, size_t piece) {
  std::vector<std::pair<std::string, std::string>> calls;
  for (size_t i = 0; i < text.size(); i += piece) {
    for (const ToolCallStreamDelta& d : stream.Feed(text.substr(i, piece))) {
      if (!d.name.empty()) {
        EXPECT_EQ(d.index, static_cast<int32_t>(calls.size()));
        calls.emplace_back(d.name, "");
      }
      EXPECT_EQ(d.index + 1, static_cast<int32_t>(calls.size()))
          << "arguments of a call not started";
      calls.back().second += d.arguments;
    }
  }
  return calls;
}

TEST(ForcedToolCallStreamTest, ANamedFunctionsOutputIsItsArgumentsFromTheFirstByte) {
  ForcedToolCallStream stream("get_weather");
  auto first = stream.Feed("{\"city\": ");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].name, "get_weather");
  EXPECT_EQ(first[0].arguments, "{\"city\": ");
  auto next = stream.Feed("\"Paris\"}");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].name, "");
  EXPECT_EQ(next[0].arguments, "\"Paris\"}");
  EXPECT_EQ(stream.num_calls(), 1);
}

// Every split of the output gives the same calls: names decoded, arguments the raw text of each
// "parameters" value (strings with braces, brackets, escaped quotes and nested arrays inside).
TEST(ForcedToolCallStreamTest, RequiredCallsRebuildExactlyWhateverThePieces) {
  const std::string text =
      "[{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Pa{ri]s \\\"x\\\"\", "
      "\"days\": [1, [2, 3]]}},\n {\"name\": \"n\\u00e9\", \"parameters\": {}} ,"
      "{\"name\":\"z\",\"parameters\":{\"a\":{\"b\":null}}}]";
  const std::vector<std::pair<std::string, std::string>> want = {
      {"get_weather", "{\"city\": \"Pa{ri]s \\\"x\\\"\", \"days\": [1, [2, 3]]}"},
      {"n\xC3\xA9", "{}"},
      {"z", "{\"a\":{\"b\":null}}"}};
  for (size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    ForcedToolCallStream stream("");
    EXPECT_EQ(Rebuild(stream, text, piece), want) << "pieces of " << piece;
    EXPECT_EQ(stream.num_calls(), 3);
  }
}

TEST(ForcedToolCallStreamTest, ParametersBeforeTheNameWaitForIt) {
  ForcedToolCallStream stream("");
  auto deltas = stream.Feed("[{\"parameters\": {\"a\": 1}, ");
  EXPECT_TRUE(deltas.empty());
  deltas = stream.Feed("\"name\": \"f\"}]");
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].name, "f");
  EXPECT_EQ(deltas[0].arguments, "{\"a\": 1}");
}

TEST(ForcedToolCallStreamTest, ScalarParametersEndAtTheirDelimiter) {
  ForcedToolCallStream stream("");
  EXPECT_EQ(Rebuild(stream,
                    "[{\"name\": \"f\", \"parameters\": 42}, {\"name\": \"g\", "
                    "\"parameters\": \"s,}\"}]",
                    4),
            (std::vector<std::pair<std::string, std::string>>{{"f", "42"}, {"g", "\"s,}\""}}));
}

}  // namespace
}  // namespace tandem::server::openai
