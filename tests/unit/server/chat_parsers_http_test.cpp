// /v1/chat/completions with --reasoning-parser qwen3 and --tool-call-parser hermes over real
// HTTP (the fake engine plays a scripted output), chat_template_kwargs, tools in the template,
// continue_final_message, /tokenize and /detokenize, and the 400s for bad chat input.
#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <thread>

#include "server/http_server.h"
#include "testing.h"

namespace tandem::server {
namespace chat_parsers_http_test {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using nlohmann::json;

// Qwen3-like: thinking off pre-fills a closed block; tools listed with tojson.
constexpr const char* kTemplate =
    "{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom raised') }}"
    "{% endif %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}"
    "{% for tc in m.tool_calls or [] %}<tool_call>{{ tc.function.arguments | tojson }}"
    "</tool_call>{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if tools %}TOOLS{{ tools | tojson }}\n{% endif %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n"
    "{% endif %}{% endif %}";

const json kMessages = json::array({{{"role", "user"}, {"content", "hi"}}});
const json kTools = json::parse(
    R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
        "properties":{"city":{"type":"string"}}}}}])");

class ChatParsersHttpTest : public ::testing::Test {
 protected:
  void Start(bool tools_flag, const std::string& reasoning_field = "both") {
    engine_ = std::make_shared<testing::FakeEngineClient>();
    ServerConfig config;
    config.host = "127.0.0.1";
    config.port = 0;
    config.served_model_names = {"tiny"};
    config.max_model_len = 1024;
    config.chat_template = kTemplate;
    config.eos_token_ids = {257};
    config.reasoning_parser = "qwen3";
    config.reasoning_field = reasoning_field;
    config.tool_call_parser = "hermes";
    config.enable_auto_tool_choice = tools_flag;
    server_ =
        std::make_unique<HttpServer>(config, engine_, std::make_shared<testing::FakeTokenizer>());
    ASSERT_TRUE(server_->Start().ok());
    thread_ = std::thread([this] { server_->Run(); });
  }
  void SetUp() override { Start(true); }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  std::pair<int, std::string> PostRaw(const std::string& body,
                                      const std::string& path = "/v1/chat/completions") {
    net::io_context ioc;
    net::ip::tcp::socket socket(ioc);
    socket.connect({net::ip::make_address("127.0.0.1"), server_->port()});
    http::request<http::string_body> request{http::verb::post, path, 11};
    request.set(http::field::host, "localhost");
    request.body() = body;
    request.prepare_payload();
    http::write(socket, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(socket, buffer, response);
    return {response.result_int(), response.body()};
  }
  std::pair<int, std::string> Post(const json& body) { return PostRaw(body.dump()); }

  // The streamed chunks' choices[0] (role chunk included), in order.
  static std::vector<json> StreamChoices(const std::string& text) {
    std::vector<json> out;
    size_t pos = 0;
    while ((pos = text.find("data: ", pos)) != std::string::npos) {
      const size_t end = text.find("\n\n", pos);
      const std::string data = text.substr(pos + 6, end - pos - 6);
      pos = end;
      if (data == "[DONE]") break;
      json chunk = json::parse(data);
      if (!chunk["choices"].empty()) out.push_back(chunk["choices"][0]);
    }
    return out;
  }

  std::shared_ptr<testing::FakeEngineClient> engine_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST_F(ChatParsersHttpTest, ThinkingOnSplitsReasoningFromContent) {
  engine_->set_script("<think>\nplan\n</think>\n\nanswer");
  auto [status, text] = Post({{"messages", kMessages}});
  ASSERT_EQ(status, 200) << text;
  const json message = json::parse(text)["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "\nplan\n");
  EXPECT_EQ(message["reasoning"], "\nplan\n");  // both names by default (--reasoning-field)
  EXPECT_EQ(message["content"], "\n\nanswer");
  EXPECT_EQ(message["tool_calls"], json::array());
  EXPECT_EQ(json::parse(text)["choices"][0]["finish_reason"], "stop");
}

TEST_F(ChatParsersHttpTest, ThinkingOffPromptMakesEverythingContent) {
  engine_->set_script("<think>x</think>y");
  auto [status, text] =
      Post({{"messages", kMessages}, {"chat_template_kwargs", {{"enable_thinking", false}}}});
  ASSERT_EQ(status, 200) << text;
  const json message = json::parse(text)["choices"][0]["message"];
  EXPECT_EQ(message["content"], "<think>x</think>y");
  EXPECT_TRUE(message["reasoning_content"].is_null());
  EXPECT_TRUE(message["reasoning"].is_null());
}

TEST_F(ChatParsersHttpTest, StreamingDeltasCarryReasoningThenContent) {
  engine_->set_script("<think>ab</think>cd");
  auto [status, text] = Post({{"messages", kMessages}, {"stream", true}});
  ASSERT_EQ(status, 200) << text;
  std::string reasoning, content, finish;
  for (const json& c : StreamChoices(text)) {
    const json& d = c["delta"];
    EXPECT_FALSE(d.contains("reasoning_content") && d.contains("content"));
    EXPECT_EQ(d.contains("reasoning"), d.contains("reasoning_content"));
    if (d.contains("reasoning")) {
      EXPECT_EQ(d["reasoning"], d["reasoning_content"]);
    }
    if (d.contains("reasoning_content")) reasoning += d["reasoning_content"].get<std::string>();
    if (d.contains("content")) content += d["content"].get<std::string>();
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
  }
  EXPECT_EQ(reasoning, "ab");
  EXPECT_EQ(content, "cd");
  EXPECT_EQ(finish, "stop");
}

TEST_F(ChatParsersHttpTest, ReasoningFieldNamesTheReasoningOneWayOrTheOther) {
  for (const std::string field : {"reasoning", "reasoning_content"}) {
    TearDown();
    Start(true, field);
    engine_->set_script("<think>p</think>a");
    auto [status, text] = Post({{"messages", kMessages}});
    ASSERT_EQ(status, 200) << text;
    const json message = json::parse(text)["choices"][0]["message"];
    EXPECT_EQ(message[field], "p") << field;
    const std::string other = field == "reasoning" ? "reasoning_content" : "reasoning";
    EXPECT_FALSE(message.contains(other)) << message.dump();
    engine_->set_script("<think>q</think>b");
    auto [stream_status, stream] = Post({{"messages", kMessages}, {"stream", true}});
    ASSERT_EQ(stream_status, 200) << stream;
    std::string reasoning;
    for (const json& c : StreamChoices(stream)) {
      EXPECT_FALSE(c["delta"].contains(other)) << c.dump();
      if (c["delta"].contains(field)) reasoning += c["delta"][field].get<std::string>();
    }
    EXPECT_EQ(reasoning, "q");
  }
}

TEST_F(ChatParsersHttpTest, AnAssistantMessagesReasoningReachesTheTemplate) {
  // Current vLLM clients send back `reasoning`; the template reads `reasoning_content`.
  engine_->set_script("ok");
  const json messages =
      json::array({{{"role", "user"}, {"content", "hi"}},
                   {{"role", "assistant"}, {"content", "a"}, {"reasoning", "earlier plan"}},
                   {{"role", "user"}, {"content", "again"}}});
  auto [status, text] = Post({{"messages", messages}});
  ASSERT_EQ(status, 200) << text;
  const std::vector<int32_t> ids = engine_->added().back().prompt_token_ids;
  const std::string prompt(ids.begin(), ids.end());  // FakeTokenizer: one id per byte
  EXPECT_NE(prompt.find("<|im_start|>assistant\n<think>earlier plan</think>a<|im_end|>"),
            std::string::npos)
      << prompt;
}

TEST_F(ChatParsersHttpTest, HermesToolCallBecomesToolCalls) {
  engine_->set_script(
      "<think>t</think>\n\n<tool_call>\n{\"name\": \"get_weather\", "
      "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
  auto [status, text] = Post({{"messages", kMessages}, {"tools", kTools}});
  ASSERT_EQ(status, 200) << text;
  const json choice = json::parse(text)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null());
  EXPECT_EQ(choice["message"]["reasoning_content"], "t");
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u);
  const json call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["id"].get<std::string>().rfind("chatcmpl-tool-", 0), 0u);
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(call["function"]["arguments"], "{\"city\": \"Paris\"}");
}

TEST_F(ChatParsersHttpTest, StreamedToolCallIdAndNameFirstThenArguments) {
  engine_->set_script("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>");
  auto [status, text] = Post({{"messages", kMessages}, {"tools", kTools}, {"stream", true}});
  ASSERT_EQ(status, 200) << text;
  std::vector<json> calls;
  std::string finish;
  for (const json& c : StreamChoices(text)) {
    if (c["delta"].contains("tool_calls")) calls.push_back(c["delta"]["tool_calls"][0]);
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
  }
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]["index"], 0);
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_TRUE(calls[0].contains("id"));
  EXPECT_EQ(calls[1]["index"], 0);
  EXPECT_EQ(calls[1]["function"]["arguments"], "{}");
  EXPECT_EQ(finish, "tool_calls");
}

TEST_F(ChatParsersHttpTest, BrokenToolCallComesBackAsContent) {
  engine_->set_script("<tool_call>{not json</tool_call>");
  auto [status, text] = Post({{"messages", kMessages}, {"tools", kTools}});
  ASSERT_EQ(status, 200) << text;
  const json choice = json::parse(text)["choices"][0];
  EXPECT_EQ(choice["message"]["content"], "<tool_call>{not json</tool_call>");
  EXPECT_EQ(choice["finish_reason"], "stop");
}

TEST_F(ChatParsersHttpTest, ToolRoundTripRendersAssistantToolCallsAndToolMessages) {
  const json messages = json::parse(R"([
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"a\": 1}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}])");
  auto [status, text] =
      PostRaw(json{{"messages", messages}, {"tools", kTools}}.dump(), "/tokenize");
  ASSERT_EQ(status, 200) << text;
  const std::string prompt = json::parse(text)["prompt"];
  // String arguments were parsed to an object; tojson keeps the client's key order.
  EXPECT_NE(prompt.find("<tool_call>{\"city\": \"Paris\", \"a\": 1}</tool_call>"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("<|im_start|>tool\nsunny<|im_end|>"), std::string::npos) << prompt;
  auto [status2, text2] = Post({{"messages", messages}, {"tools", kTools}, {"max_tokens", 2}});
  EXPECT_EQ(status2, 200) << text2;
}

TEST_F(ChatParsersHttpTest, ToolSchemaKeyOrderIsPreserved) {
  const std::string body =
      R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function",
          "function": {"name": "f", "parameters": {"z": 1, "a": 2}}}]})";
  auto [status, text] = PostRaw(body, "/tokenize");
  ASSERT_EQ(status, 200) << text;
  EXPECT_NE(json::parse(text)["prompt"].get<std::string>().find(
                "TOOLS[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": "
                "{\"z\": 1, \"a\": 2}}}]"),
            std::string::npos)
      << text;
}

TEST_F(ChatParsersHttpTest, ContinueFinalMessageCutsAfterItsContent) {
  const json messages = json::parse(R"([{"role": "user", "content": "hi"},
                                        {"role": "assistant", "content": "Once upon"}])");
  auto [status, text] = PostRaw(json{{"messages", messages},
                                     {"continue_final_message", true},
                                     {"add_generation_prompt", false}}
                                    .dump(),
                                "/tokenize");
  ASSERT_EQ(status, 200) << text;
  const json body = json::parse(text);
  EXPECT_EQ(body["prompt"], "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nOnce upon");
  EXPECT_EQ(body["count"], body["prompt"].get<std::string>().size());
  auto [bad, bad_text] = PostRaw(
      json{
          {"messages", messages}, {"continue_final_message", true}, {"add_generation_prompt", true}}
          .dump(),
      "/tokenize");
  EXPECT_EQ(bad, 400) << bad_text;
}

TEST_F(ChatParsersHttpTest, TokenizeAndDetokenize) {
  auto [status, text] = PostRaw(R"({"prompt": "ab", "return_token_strs": true})", "/tokenize");
  ASSERT_EQ(status, 200) << text;
  const json body = json::parse(text);
  EXPECT_EQ(body["tokens"], json::array({97, 98}));
  EXPECT_EQ(body["count"], 2);
  EXPECT_EQ(body["max_model_len"], 1024);
  EXPECT_EQ(body["token_strs"], json::array({"a", "b"}));
  EXPECT_FALSE(body.contains("prompt"));
  auto [s2, t2] = PostRaw(R"({"tokens": [97, 98, 257]})", "/detokenize");
  ASSERT_EQ(s2, 200) << t2;
  EXPECT_EQ(json::parse(t2)["prompt"], "ab</s>");
  EXPECT_EQ(PostRaw(R"({"tokens": [999]})", "/detokenize").first, 400);
  EXPECT_EQ(PostRaw(R"({"prompt": "a", "model": "nope"})", "/tokenize").first, 404);
  EXPECT_EQ(PostRaw(R"({"model": "tiny"})", "/tokenize").first, 400);
}

TEST_F(ChatParsersHttpTest, BadMessagesAre400sAndTheServerStaysUp) {
  auto unknown_role = Post({{"messages", {{{"role", "wizard"}, {"content", "x"}}}}});
  EXPECT_EQ(unknown_role.first, 400);
  EXPECT_NE(unknown_role.second.find("wizard"), std::string::npos);
  auto wrong_content = Post({{"messages", {{{"role", "user"}, {"content", 5}}}}});
  EXPECT_EQ(wrong_content.first, 400);
  EXPECT_NE(wrong_content.second.find("content"), std::string::npos);
  auto image = Post({{"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}}}});
  EXPECT_EQ(image.first, 400);
  auto raised = Post({{"messages", {{{"role", "user"}, {"content", "boom"}}}}});
  EXPECT_EQ(raised.first, 400);
  EXPECT_NE(raised.second.find("boom raised"), std::string::npos) << raised.second;
  auto named_unknown =
      Post({{"messages", kMessages},
            {"tools", kTools},
            {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}});
  EXPECT_EQ(named_unknown.first, 400);
  auto choice_without_tools = Post({{"messages", kMessages}, {"tool_choice", "required"}});
  EXPECT_EQ(choice_without_tools.first, 400);
  engine_->set_script("ok");
  EXPECT_EQ(Post({{"messages", kMessages}}).first, 200);
}

TEST_F(ChatParsersHttpTest, ToolChoiceNoneLeavesToolTextAsContent) {
  engine_->set_script("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>");
  auto [status, text] = Post({{"messages", kMessages}, {"tools", kTools}, {"tool_choice", "none"}});
  ASSERT_EQ(status, 200) << text;
  const json choice = json::parse(text)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_EQ(choice["message"]["tool_calls"], json::array());
}

class ChatNoAutoToolsHttpTest : public ChatParsersHttpTest {
 protected:
  void SetUp() override { Start(false); }
};

TEST_F(ChatNoAutoToolsHttpTest, AutoToolChoiceWithoutTheFlagIs400) {
  auto [status, text] = Post({{"messages", kMessages}, {"tools", kTools}});
  EXPECT_EQ(status, 400);
  EXPECT_NE(text.find("--enable-auto-tool-choice"), std::string::npos) << text;
  engine_->set_script("ok");
  EXPECT_EQ(Post({{"messages", kMessages}, {"tools", kTools}, {"tool_choice", "none"}}).first, 200);
}

}  // namespace
}  // namespace chat_parsers_http_test
}  // namespace tandem::server
