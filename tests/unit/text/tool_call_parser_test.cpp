// ToolCallParser: hermes JSON and qwen3_coder XML tool calls, whole and incremental.
#include "text/tool_call_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tandem::text {
namespace {

using OJson = nlohmann::ordered_json;

ToolCallDelta FeedPieces(ToolCallParser& parser, const std::vector<std::string>& pieces) {
  ToolCallDelta all;
  auto add = [&all](ToolCallDelta d) {
    all.content += d.content;
    for (auto& c : d.calls) all.calls.push_back(c);
  };
  for (const std::string& p : pieces) add(parser.Feed(p));
  add(parser.Finish());
  return all;
}

std::vector<std::string> Chars(const std::string& text) {
  std::vector<std::string> out;
  for (char c : text) out.push_back(std::string(1, c));
  return out;
}

const OJson kTools = OJson::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
   "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                  "celsius": {"type": "boolean"}, "ratio": {"type": "number"},
                  "tags": {"type": "array"}}}}}])");

TEST(HermesToolCallParserTest, ParsesQwen3ToolCall) {
  const std::string text =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}"
      "\n</tool_call>";
  auto parser = MakeHermesToolCallParser();
  ToolCallDelta d = parser->ParseAll(text);
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "get_weather");
  EXPECT_EQ(d.calls[0].arguments, "{\"city\": \"Paris\", \"days\": 2}");
  EXPECT_EQ(d.content, "");
}

TEST(HermesToolCallParserTest, ContentBeforeAndTwoCallsOneCharAtATime) {
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"z\": 1, \"y\": [1]}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>\n";
  auto parser = MakeHermesToolCallParser();
  ToolCallDelta d = FeedPieces(*parser, Chars(text));
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_EQ(d.calls[0].name, "a");
  EXPECT_EQ(d.calls[0].arguments, "{\"z\": 1, \"y\": [1]}");  // the model's key order
  EXPECT_EQ(d.calls[1].name, "b");
  EXPECT_EQ(d.calls[1].arguments, "{}");
  EXPECT_EQ(d.content, "Let me check.\n");
  EXPECT_EQ(parser->num_calls(), 2);
}

TEST(HermesToolCallParserTest, BrokenJsonComesBackAsContent) {
  const std::string text = "<tool_call>\n{\"name\": \"a\", \"arguments\": {\n</tool_call>";
  auto parser = MakeHermesToolCallParser();
  ToolCallDelta d = FeedPieces(*parser, Chars(text));
  EXPECT_TRUE(d.calls.empty());
  EXPECT_EQ(d.content, text);
}

TEST(HermesToolCallParserTest, UnterminatedValidCallIsACall) {
  auto parser = MakeHermesToolCallParser();
  ToolCallDelta d = parser->ParseAll("<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": \"é\"}}");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].arguments, "{\"x\": \"é\"}");
}

TEST(HermesToolCallParserTest, UnterminatedGarbageIsContent) {
  auto parser = MakeHermesToolCallParser();
  ToolCallDelta d = parser->ParseAll("hi <tool_call>{\"na");
  EXPECT_TRUE(d.calls.empty());
  EXPECT_EQ(d.content, "hi <tool_call>{\"na");
}

TEST(HermesToolCallParserTest, PartialTagIsHeldThenReleased) {
  auto parser = MakeHermesToolCallParser();
  EXPECT_EQ(parser->Feed("a <tool_").content, "a ");
  EXPECT_EQ(parser->Feed("box>").content, "<tool_box>");
}

TEST(Qwen3CoderToolCallParserTest, ConvertsBySchemaType) {
  const std::string text =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n"
      "<parameter=days>\n3\n</parameter>\n<parameter=celsius>\nTrue\n</parameter>\n"
      "<parameter=ratio>\n0.5\n</parameter>\n<parameter=tags>\n[\"a\", \"b\"]\n</parameter>\n"
      "<parameter=extra>\n42\n</parameter>\n</function>\n</tool_call>";
  for (bool by_char : {false, true}) {
    auto parser = MakeQwen3CoderToolCallParser(kTools);
    ToolCallDelta d = by_char ? FeedPieces(*parser, Chars(text)) : parser->ParseAll(text);
    ASSERT_EQ(d.calls.size(), 1u);
    EXPECT_EQ(d.calls[0].name, "get_weather");
    EXPECT_EQ(d.calls[0].arguments,
              "{\"city\": \"New York\", \"days\": 3, \"celsius\": true, \"ratio\": 0.5, "
              "\"tags\": [\"a\", \"b\"], \"extra\": \"42\"}");
    EXPECT_EQ(d.content, "");
  }
}

TEST(Qwen3CoderToolCallParserTest, BadTypedValueStaysAString) {
  auto parser = MakeQwen3CoderToolCallParser(kTools);
  ToolCallDelta d = parser->ParseAll(
      "<tool_call>\n<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n</function>\n"
      "</tool_call>");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].arguments, "{\"days\": \"three\"}");
}

TEST(Qwen3CoderToolCallParserTest, MultilineStringKeepsInnerNewlines) {
  auto parser = MakeQwen3CoderToolCallParser(OJson());
  ToolCallDelta d = parser->ParseAll(
      "<tool_call>\n<function=write>\n<parameter=code>\nline1\nline2\n</parameter>\n</function>\n"
      "</tool_call>");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].name, "write");
  EXPECT_EQ(d.calls[0].arguments, "{\"code\": \"line1\\nline2\"}");
}

TEST(Qwen3CoderToolCallParserTest, NotAFunctionIsContent) {
  auto parser = MakeQwen3CoderToolCallParser(kTools);
  ToolCallDelta d = parser->ParseAll("ok <tool_call>\nnope\n</tool_call>");
  EXPECT_TRUE(d.calls.empty());
  EXPECT_EQ(d.content, "ok <tool_call>\nnope\n</tool_call>");
}

TEST(ToolCallParserTest, CreateByName) {
  EXPECT_TRUE(ToolCallParser::Create("hermes", OJson()).ok());
  EXPECT_TRUE(ToolCallParser::Create("qwen3_coder", kTools).ok());
  auto bad = ToolCallParser::Create("mistral", OJson());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mistral"), std::string::npos);
}

}  // namespace
}  // namespace tandem::text
