// The Anthropic Messages translation (request → chat body) and answer shapes (stop reasons,
// content blocks, the streamed event sequence). End to end: tests/e2e/test_anthropic_messages.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/anthropic/message_stream.h"
#include "server/anthropic/messages_response.h"
#include "server/anthropic/messages_types.h"

namespace tandem::server::anthropic {
namespace {

using nlohmann::json;
using OJson = nlohmann::ordered_json;

OJson Body(const char* text) { return OJson::parse(text); }

OJson Chat(const char* anthropic_body, MessagesEndpoint endpoint = MessagesEndpoint::kMessages) {
  auto chat = ToChatCompletionBody(Body(anthropic_body), endpoint);
  EXPECT_TRUE(chat.ok()) << chat.error().status.message();
  return chat.ok() ? chat.value() : OJson();
}

std::string Error(const char* anthropic_body) {
  auto chat = ToChatCompletionBody(Body(anthropic_body), MessagesEndpoint::kMessages);
  EXPECT_FALSE(chat.ok()) << anthropic_body;
  return chat.ok() ? "" : chat.error().status.message();
}

TEST(AnthropicRequestTest, SystemBlocksAndSamplingFieldsBecomeTheChatBody) {
  const OJson chat = Chat(R"({"model": "m", "max_tokens": 7, "system": [{"type": "text",
      "text": "a"}, {"type": "text", "text": "x-anthropic-billing-header: 1"}, {"type": "text",
      "text": "b"}], "messages": [{"role": "user", "content": "hi"}], "stop_sequences": ["X"],
      "temperature": 0.5, "top_p": 0.9, "top_k": 3, "stream": true,
      "metadata": {"user_id": "u"}})");
  EXPECT_EQ(chat, Body(R"({"model": "m", "messages": [{"role": "system", "content": "ab"},
      {"role": "user", "content": "hi"}], "max_tokens": 7, "stop": ["X"], "temperature": 0.5,
      "top_p": 0.9, "top_k": 3, "stream": true})"));
}

TEST(AnthropicRequestTest, ToolUseAndToolResultBecomeToolCallsAndToolMessages) {
  const OJson chat = Chat(R"({"max_tokens": 1, "messages": [
      {"role": "user", "content": "q"},
      {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "text", "text": "t"},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"b": 1, "a": 2}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}],
        "is_error": true}]}]})");
  EXPECT_EQ(chat["messages"], Body(R"([{"role": "user", "content": "q"},
      {"role": "assistant", "content": [{"type": "text", "text": "t"}], "reasoning": "hmm",
       "tool_calls": [{"id": "toolu_1", "type": "function",
                       "function": {"name": "f", "arguments": {"b": 1, "a": 2}}}]},
      {"role": "tool", "tool_call_id": "toolu_1", "content": "r1\nr2"}])"));
}

TEST(AnthropicRequestTest, ToolsAndToolChoiceMapOntoChatsFunctions) {
  const OJson chat = Chat(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "q"}],
      "tools": [{"name": "f", "description": "d", "input_schema": {"properties": {}}}],
      "tool_choice": {"type": "any", "disable_parallel_tool_use": true}})");
  EXPECT_EQ(chat["tools"], Body(R"([{"type": "function", "function": {"name": "f",
      "description": "d", "parameters": {"properties": {}, "type": "object"}}}])"));
  EXPECT_EQ(chat["tool_choice"], "required");
  EXPECT_EQ(chat["parallel_tool_calls"], false);
  const OJson named = Chat(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "q"}],
      "tools": [{"name": "f", "input_schema": {}}],
      "tool_choice": {"type": "tool", "name": "f"}})");
  EXPECT_EQ(named["tool_choice"], Body(R"({"type": "function", "function": {"name": "f"}})"));
}

TEST(AnthropicRequestTest, ThinkingSetsEnableThinkingUnlessTheKwargsDo) {
  EXPECT_EQ(Chat(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "q"}],
                     "thinking": {"type": "enabled", "budget_tokens": 2048}})")
                ["chat_template_kwargs"],
            Body(R"({"enable_thinking": true})"));
  EXPECT_EQ(Chat(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "q"}],
                     "thinking": {"type": "disabled"},
                     "chat_template_kwargs": {"enable_thinking": true}})")["chat_template_kwargs"],
            Body(R"({"enable_thinking": true})"));
}

TEST(AnthropicRequestTest, CountTokensNeedsNoMaxTokensAndCarriesNoSampling) {
  const OJson chat = Chat(R"({"model": "m", "messages": [{"role": "user", "content": "q"}],
                              "temperature": 0})",
                          MessagesEndpoint::kCountTokens);
  EXPECT_EQ(chat, Body(R"({"model": "m", "messages": [{"role": "user", "content": "q"}]})"));
}

TEST(AnthropicRequestTest, RefusesWhatItCannotServeNamingIt) {
  EXPECT_NE(Error(R"({"messages": [{"role": "user", "content": "q"}]})").find("max_tokens"),
            std::string::npos);
  EXPECT_NE(Error(R"({"max_tokens": 1, "messages": [{"role": "tool", "content": "q"}]})")
                .find("'tool' is invalid"),
            std::string::npos);
  EXPECT_NE(Error(R"({"max_tokens": 1, "messages": [{"role": "user", "content": [
                {"type": "image", "source": {}}]}]})")
                .find("image blocks are not supported"),
            std::string::npos);
  EXPECT_NE(Error(R"({"max_tokens": 1, "messages": [{"role": "user", "content": [
                {"type": "tool_use", "name": "f", "input": {}}]}]})")
                .find("tool_use"),
            std::string::npos);
  EXPECT_NE(Error(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "q"}],
                      "tools": [{"type": "web_search_20250305", "name": "w"}]})")
                .find("server tools"),
            std::string::npos);
  EXPECT_NE(Error(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "q"}],
                      "tool_choice": {"type": "tool"}})")
                .find("tool_choice"),
            std::string::npos);
  EXPECT_NE(Error(R"({"max_tokens": 1, "messages": [{"role": "user", "content": [
                {"type": 7}]}]})")
                .find("content[0]"),
            std::string::npos);
}

TEST(AnthropicResponseTest, StopReasonsAndErrorTypes) {
  EXPECT_EQ(ToStopReason("stop", nullptr, false).reason, "end_turn");
  EXPECT_EQ(ToStopReason("stop", 151645, false).reason, "end_turn");  // a stop token id
  EXPECT_EQ(ToStopReason("length", nullptr, false).reason, "max_tokens");
  const StopReason sequence = ToStopReason("stop", "END", false);
  EXPECT_EQ(sequence.reason, "stop_sequence");
  EXPECT_EQ(sequence.sequence, "END");
  EXPECT_EQ(ToStopReason("length", nullptr, true).reason, "tool_use");
  EXPECT_STREQ(ErrorTypeFor(400), "invalid_request_error");
  EXPECT_STREQ(ErrorTypeFor(401), "authentication_error");
  EXPECT_STREQ(ErrorTypeFor(404), "not_found_error");
  EXPECT_STREQ(ErrorTypeFor(503), "overloaded_error");
  EXPECT_STREQ(ErrorTypeFor(500), "api_error");
  EXPECT_EQ(json::parse(AnthropicErrorBody(BadParam("x", "bad"))),
            json::parse(R"({"type": "error", "error": {"type": "invalid_request_error",
                                                      "message": "bad"}})"));
  EXPECT_TRUE(IsMessagesPath("/v1/messages"));
  EXPECT_TRUE(IsMessagesPath("/v1/messages/count_tokens"));
  EXPECT_FALSE(IsMessagesPath("/v1/messagesx"));
}

TEST(AnthropicResponseTest, ContentBlocksTrimTextBeforeCallsAndKeepBadArgumentsAsText) {
  openai::ChatOutputParts parts;
  parts.reasoning = "r";
  parts.content = "Sure.\n\n";
  parts.calls = {{"f", R"({"a": 1})"}, {"g", R"({"cut": )"}};
  int32_t num_tool_use = 0;
  json content = ContentBlocks(parts, &num_tool_use);
  EXPECT_EQ(num_tool_use, 1);
  ASSERT_EQ(content.size(), 3u);
  EXPECT_EQ(content[0]["type"], "thinking");
  // Trailing whitespace goes, as with any text next to a call.
  EXPECT_EQ(content[1], json::parse(R"({"type": "text", "text": "Sure.\n\n{\"cut\":"})"));
  EXPECT_EQ(content[2]["input"], json::parse(R"({"a": 1})"));
  EXPECT_EQ(content[2]["id"].get<std::string>().rfind("toolu_", 0), 0u);
}

// Records a stream's events as (name, data).
struct StreamSink : ResponseSink {
  std::vector<std::pair<std::string, json>> events;
  bool ended = false;
  void SendResponse(int, std::string, std::string) override { ADD_FAILURE() << "not streamed"; }
  void SendResponseWithHeaders(int, std::string, std::string,
                               std::vector<std::pair<std::string, std::string>>) override {}
  void StartStream(std::string, int) override {}
  void SendStreamData(std::string data) override {
    const size_t data_at = data.find("\ndata: ");
    ASSERT_EQ(data.rfind("event: ", 0), 0u) << data;
    ASSERT_NE(data_at, std::string::npos) << data;
    ASSERT_EQ(data.substr(data.size() - 2), "\n\n") << data;
    events.emplace_back(data.substr(7, data_at - 7),
                        json::parse(data.substr(data_at + 7, data.size() - data_at - 9)));
  }
  void EndStream() override { ended = true; }
  void SetOnDisconnect(std::function<void()>) override {}
  void AddResponseHeader(std::string, std::string) override {}
  boost::asio::any_io_executor Executor() const override { return {}; }
};

TEST(MessageStreamTest, EventsFollowAnthropicsOrderAndHoldBackSpaceBeforeACall) {
  auto sink = std::make_shared<StreamSink>();
  MessageStream stream(sink);
  stream.Start(MessageJson("msg_1", "m", json::array(), nullptr, {}));
  openai::ChatOutputParts thinking;
  thinking.reasoning = "r";
  stream.Write(thinking);
  openai::ChatOutputParts text;
  text.content = "Hi\n";
  stream.Write(text);
  openai::ChatOutputParts call;
  call.calls = {{"f", R"({"a": 1})"}};
  stream.Write(call);
  openai::GenerationUsage usage;
  usage.prompt_tokens = 5;
  usage.completion_tokens = 9;
  stream.Finish("stop", nullptr, usage);
  std::vector<std::string> names;
  for (const auto& [name, data] : sink->events) {
    EXPECT_EQ(name, data["type"]);
    names.push_back(name);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "message_start", "content_block_start", "ping", "content_block_delta",
                "content_block_delta", "content_block_stop", "content_block_start",
                "content_block_delta", "content_block_stop", "content_block_start",
                "content_block_delta", "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(sink->events[4].second["delta"]["type"], "signature_delta");
  EXPECT_EQ(sink->events[7].second["delta"],
            json::parse(R"({"type": "text_delta", "text": "Hi"})"));
  EXPECT_EQ(sink->events[10].second["delta"]["partial_json"], R"({"a": 1})");
  EXPECT_EQ(sink->events[12].second["delta"],
            json::parse(R"({"stop_reason": "tool_use", "stop_sequence": null})"));
  EXPECT_EQ(sink->events[12].second["usage"]["output_tokens"], 9);
  EXPECT_TRUE(sink->ended);
}

TEST(MessageStreamTest, TrailingSpaceIsSentWhenNoCallFollows) {
  auto sink = std::make_shared<StreamSink>();
  MessageStream stream(sink);
  stream.Start(MessageJson("msg_1", "m", json::array(), nullptr, {}));
  openai::ChatOutputParts text;
  text.content = "a ";
  stream.Write(text);
  stream.Finish("length", nullptr, {});
  std::string streamed;
  for (const auto& [name, data] : sink->events) {
    if (name == "content_block_delta") streamed += data["delta"]["text"].get<std::string>();
  }
  EXPECT_EQ(streamed, "a ");
  EXPECT_EQ(sink->events[sink->events.size() - 2].second["delta"]["stop_reason"], "max_tokens");
}

}  // namespace
}  // namespace tandem::server::anthropic
