// The Responses API's pieces without HTTP: the output items and streamed events built from a
// generation's text (ResponseOutputBuilder), input items → chat messages (ParseResponsesInput),
// and the bounded response store.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "server/openai/response_output.h"
#include "server/openai/response_store.h"
#include "server/openai/responses_types.h"
#include "testing.h"

namespace tandem::server::openai {
namespace {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

// A builder over `config` that records the events it sends.
struct Recorder {
  std::vector<std::string> types;
  std::vector<json> events;
  ResponseOutputBuilder Make(const ServerConfig& config, const ChatInput& input) {
    return ResponseOutputBuilder(ChatOutputParser(config, input, ""), [this](json event) {
      types.push_back(event["type"].get<std::string>());
      events.push_back(std::move(event));
    });
  }
};

ChatInput WeatherTools() {
  ChatInput input;
  input.tools = OJson::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
  input.tool_choice = ToolChoice::kAuto;
  return input;
}

TEST(ResponseOutputBuilderTest, ReasoningThenContentAreTwoItemsEachOpenedAndClosed) {
  ServerConfig config;
  config.reasoning_parser = "qwen3";
  Recorder recorder;
  ResponseOutputBuilder builder = recorder.Make(config, ChatInput());
  for (const char* text : {"<think>", "abc", "</think>", "\n\n", "Hello", " world"}) {
    builder.Feed(text, 1);
  }
  builder.Finish(/*incomplete=*/false);

  const json& items = builder.items();
  ASSERT_EQ(items.size(), 2u) << items.dump();
  EXPECT_EQ(items[0]["type"], "reasoning");
  EXPECT_EQ(items[0]["content"][0], (json{{"type", "reasoning_text"}, {"text", "abc"}}));
  EXPECT_EQ(items[0]["status"], "completed");
  EXPECT_EQ(items[1]["type"], "message");
  EXPECT_EQ(items[1]["content"][0]["text"], "\n\nHello world");  // chat's content, as is
  EXPECT_EQ(builder.num_reasoning_tokens(), 2);                  // "abc" and the closing tag
  const std::vector<std::string> expected = {
      "response.output_item.added",    "response.content_part.added",
      "response.reasoning_text.delta", "response.reasoning_text.done",
      "response.content_part.done",    "response.output_item.done",
      "response.output_item.added",    "response.content_part.added",
      "response.output_text.delta",    "response.output_text.delta",
      "response.output_text.done",     "response.content_part.done",
      "response.output_item.done"};
  EXPECT_EQ(recorder.types, expected);
  EXPECT_EQ(recorder.events[6]["output_index"], 1);
  EXPECT_EQ(recorder.events[8]["delta"], "\n\nHello");
  EXPECT_EQ(recorder.events[8]["item_id"], items[1]["id"]);
}

TEST(ResponseOutputBuilderTest, BlankTextNextToAToolCallOpensNoMessage) {
  ServerConfig config;
  config.enable_auto_tool_choice = true;
  config.tool_call_parser = "hermes";
  Recorder recorder;
  ResponseOutputBuilder builder = recorder.Make(config, WeatherTools());
  builder.Feed("\n", 1);
  builder.Feed(
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>",
      12);
  builder.Finish(false);

  ASSERT_EQ(builder.items().size(), 1u) << builder.items().dump();
  const json& call = builder.items()[0];
  EXPECT_EQ(call["type"], "function_call");
  EXPECT_EQ(call["name"], "get_weather");
  EXPECT_EQ(call["arguments"], "{\"city\": \"Paris\"}");
  EXPECT_EQ(call["status"], "completed");
  EXPECT_EQ(recorder.types,
            (std::vector<std::string>{
                "response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done"}));
  const OJson message = builder.AssistantMessage();
  EXPECT_EQ(message["content"], "");
  EXPECT_EQ(message["tool_calls"][0]["id"].dump(), call["call_id"].dump());
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"].dump(), call["arguments"].dump());
}

TEST(ResponseOutputBuilderTest, OutputOfOnlyBlanksIsStillAMessage) {
  ResponseOutputBuilder builder(ChatOutputParser(ServerConfig(), ChatInput(), ""), nullptr);
  builder.Feed("\n", 1);
  builder.Finish(false);
  ASSERT_EQ(builder.items().size(), 1u);
  EXPECT_EQ(builder.items()[0]["content"][0]["text"], "\n");
}

TEST(ResponseOutputBuilderTest, CutByMaxOutputTokensMarksTheOpenItemIncomplete) {
  ResponseOutputBuilder builder(ChatOutputParser(ServerConfig(), ChatInput(), ""), nullptr);
  builder.Feed("Once", 1);
  builder.Finish(/*incomplete=*/true);
  EXPECT_EQ(builder.items()[0]["status"], "incomplete");
  EXPECT_EQ(builder.AssistantMessage(), (OJson{{"role", "assistant"}, {"content", "Once"}}));
}

TEST(ResponsesInputTest, ItemsBecomeChatMessagesWithCallsMergedIntoTheAssistantTurn) {
  const OJson input = OJson::parse(R"([
      {"role": "user", "content": [{"type": "input_text", "text": "a"},
                                   {"type": "input_text", "text": "b"}]},
      {"type": "reasoning", "id": "rs_1", "summary": []},
      {"type": "message", "role": "assistant",
       "content": [{"type": "output_text", "text": "Let me look."}]},
      {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
      {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{\"x\": 1}"},
      {"type": "function_call_output", "call_id": "c1", "output": "one"}])");
  auto messages = ParseResponsesInput(input);
  ASSERT_TRUE(messages.ok()) << messages.error().status.message();
  const OJson expected = OJson::parse(R"([
      {"role": "user", "content": "a\nb"},
      {"role": "assistant", "content": "Let me look.", "tool_calls": [
          {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
          {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{\"x\": 1}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "one"}])");
  EXPECT_EQ(messages.value(), expected);
  EXPECT_EQ(ParseResponsesInput("hi").value(),
            OJson::parse(R"([{"role": "user", "content": "hi"}])"));
}

TEST(ResponsesInputTest, UnsupportedItemsAre400sNamingTheItem) {
  auto image = ParseResponsesInput(OJson::parse(R"([{"role": "user", "content": "ok"},
      {"role": "user", "content": [{"type": "input_image"}]}])"));
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().param, "input");
  EXPECT_NE(image.error().status.message().find("input[1]"), std::string::npos)
      << image.error().status.message();
  auto call = ParseResponsesInput(OJson::parse(R"([{"type": "function_call", "name": "f"}])"));
  ASSERT_FALSE(call.ok());
  EXPECT_NE(call.error().status.message().find("'call_id'"), std::string::npos);
}

TEST(ResponsesInputTest, APartTypeThatIsNotAStringIsA400NotAThrow) {
  auto part = ParseResponsesInput(OJson::parse(R"([{"role": "user",
      "content": [{"type": ["input_text"], "text": "a"}]}])"));
  ASSERT_FALSE(part.ok());
  EXPECT_EQ(part.error().param, "input");
}

TEST(ResponsesRequestTest, AToolOrToolChoiceTypeThatIsNotAStringIsA400NotAThrow) {
  ServerContext context;
  context.config.served_model_names = {"m"};
  context.config.max_model_len = 64;
  context.tokenizer = std::make_shared<testing::FakeTokenizer>();
  auto chat = [&](const char* body) {
    auto request = ParseResponsesRequest(OJson::parse(body));
    EXPECT_TRUE(request.ok()) << request.error().status.message();
    return ToChatRequest(request.value(), OJson::array(), context);
  };
  auto tools = chat(R"({"model": "m", "input": "hi", "tools": [{"type": {"x": 1}, "name": "f"}]})");
  ASSERT_FALSE(tools.ok());
  EXPECT_EQ(tools.error().param, "tools");
  auto choice = chat(R"({"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f"}],
      "tool_choice": {"type": 3, "name": "f"}})");
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.error().param, "tool_choice");
  auto ok = chat(R"({"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f"}],
      "tool_choice": {"type": "function", "name": "f"}})");
  EXPECT_TRUE(ok.ok()) << ok.error().status.message();
}

TEST(ResponseStoreTest, KeepsTheMostRecentlyUsedUpToItsCapacity) {
  ResponseStore store(2);
  store.Put("a", {json{{"id", "a"}}, OJson::array()});
  store.Put("b", {json{{"id", "b"}}, OJson::array()});
  ASSERT_TRUE(store.Get("a").has_value());  // a is now more recent than b
  store.Put("c", {json{{"id", "c"}}, OJson::array()});
  EXPECT_EQ(store.size(), 2u);
  EXPECT_FALSE(store.Get("b").has_value());
  EXPECT_EQ(store.Get("a")->response["id"], "a");
  EXPECT_TRUE(store.Erase("c"));
  EXPECT_FALSE(store.Erase("c"));
  EXPECT_FALSE(store.Get("c").has_value());
}

TEST(ResponseStoreTest, KeepsTheMostRecentlyUsedUpToItsBytes) {
  // Each entry: id (1) + {"id":"x","text":"<100 x>"} (120) + [] (2) = 123 bytes.
  const std::string text(100, 'x');
  auto entry = [&](const std::string& id) {
    return StoredResponse{json{{"id", id}, {"text", text}}, OJson::array()};
  };
  ResponseStore store(100, 300);
  store.Put("a", entry("a"));
  store.Put("b", entry("b"));
  EXPECT_EQ(store.bytes(), 246u);
  ASSERT_TRUE(store.Get("a").has_value());  // a is now more recent than b
  store.Put("c", entry("c"));               // 369 > 300: b goes
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.bytes(), 246u);
  EXPECT_FALSE(store.Get("b").has_value());
  EXPECT_TRUE(store.Get("a").has_value());
  // One larger than the whole store is not kept, and evicts nothing.
  store.Put("big", {json{{"id", "big"}, {"text", std::string(400, 'y')}}, OJson::array()});
  EXPECT_FALSE(store.Get("big").has_value());
  EXPECT_EQ(store.size(), 2u);
  EXPECT_TRUE(store.Erase("a"));
  EXPECT_EQ(store.bytes(), 123u);
}

}  // namespace
}  // namespace tandem::server::openai
