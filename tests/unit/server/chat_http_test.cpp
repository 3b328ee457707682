// /v1/chat/completions over real HTTP with a small chat template and the fake engine.
#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <thread>
#include <utility>
#include <vector>

#include "server/http_server.h"
#include "testing.h"

namespace tandem::server {
namespace chat_http_test {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using nlohmann::json;

constexpr const char* kTemplate =
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}";

class ChatHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_shared<testing::FakeEngineClient>();
    ServerConfig config;
    config.host = "127.0.0.1";
    config.port = 0;
    config.served_model_names = {"tiny"};
    config.max_model_len = 128;
    config.chat_template = kTemplate;
    server_ =
        std::make_unique<HttpServer>(config, engine_, std::make_shared<testing::FakeTokenizer>());
    ASSERT_TRUE(server_->Start().ok());
    thread_ = std::thread([this] { server_->Run(); });
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  std::pair<int, std::string> Post(const json& body, const char* path = "/v1/chat/completions") {
    net::io_context ioc;
    net::ip::tcp::socket socket(ioc);
    socket.connect({net::ip::make_address("127.0.0.1"), server_->port()});
    http::request<http::string_body> request{http::verb::post, path, 11};
    request.set(http::field::host, "localhost");
    request.body() = body.dump();
    request.prepare_payload();
    http::write(socket, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(socket, buffer, response);
    return {response.result_int(), response.body()};
  }

  std::shared_ptr<testing::FakeEngineClient> engine_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

const json kMessages = json::array({{{"role", "user"}, {"content", "hi"}}});

TEST_F(ChatHttpTest, RendersTemplateAndAnswersAsAssistant) {
  // Prompt "<s><user>hi<assistant>": 22 byte tokens; the fake answers each + 1.
  auto [status, text] = Post({{"messages", kMessages}, {"max_tokens", 3}});
  ASSERT_EQ(status, 200) << text;
  const json body = json::parse(text);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "=t?");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 22);
  // The rendered text starts with the BOS string, so no second BOS is added.
  EXPECT_EQ(engine_->added()[0].prompt_token_ids.front(), '<');
}

TEST_F(ChatHttpTest, DefaultMaxTokensIsTheRestOfTheContext) {
  auto [status, text] = Post({{"messages", kMessages}});
  ASSERT_EQ(status, 200) << text;
  EXPECT_EQ(engine_->added()[0].sampling.max_tokens, 128 - 22);
}

TEST_F(ChatHttpTest, StreamStartsWithRoleAndEndsWithUsageAndDone) {
  auto [status, text] = Post({{"messages", kMessages},
                              {"max_tokens", 2},
                              {"stream", true},
                              {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(status, 200);
  std::vector<json> chunks;
  size_t pos = 0;
  while ((pos = text.find("data: ", pos)) != std::string::npos) {
    const size_t end = text.find("\n\n", pos);
    const std::string data = text.substr(pos + 6, end - pos - 6);
    pos = end;
    if (data == "[DONE]") break;
    chunks.push_back(json::parse(data));
  }
  EXPECT_NE(text.find("data: [DONE]\n\n"), std::string::npos);
  ASSERT_GE(chunks.size(), 3u);
  EXPECT_EQ(chunks.front()["object"], "chat.completion.chunk");
  EXPECT_EQ(chunks.front()["choices"][0]["delta"]["role"], "assistant");
  std::string content;
  for (const json& c : chunks) {
    if (!c["choices"].empty() && c["choices"][0]["delta"].contains("content")) {
      content += c["choices"][0]["delta"]["content"].get<std::string>();
    }
  }
  EXPECT_EQ(content, "=t");
  EXPECT_EQ(chunks.back()["usage"]["completion_tokens"], 2);
  EXPECT_EQ(chunks[chunks.size() - 2]["choices"][0]["finish_reason"], "length");
}

// The first step every generating endpoint shares (openai/serving.h): while the engine is not
// ready, a 503 in the endpoint's own error shape, streaming or not, and nothing reaches it.
TEST_F(ChatHttpTest, GeneratingEndpointsAnswer503InTheirShapeWhileTheEngineIsNotReady) {
  engine_->set_ready(false);
  for (const bool stream : {false, true}) {
    for (const auto& [path, body] : std::vector<std::pair<const char*, json>>{
             {"/v1/chat/completions", {{"messages", kMessages}}},
             {"/v1/completions", {{"prompt", "hi"}}},
             {"/v1/responses", {{"input", "hi"}}}}) {
      json streamed = body;
      streamed["stream"] = stream;
      auto [status, text] = Post(streamed, path);
      EXPECT_EQ(status, 503) << path << ": " << text;
      EXPECT_EQ(json::parse(text)["error"]["code"], 503) << path << ": " << text;
      EXPECT_EQ(json::parse(text)["error"]["type"], "ServiceUnavailableError") << text;
    }
    auto [status, text] =
        Post({{"messages", kMessages}, {"max_tokens", 2}, {"stream", stream}}, "/v1/messages");
    EXPECT_EQ(status, 503) << text;
    EXPECT_EQ(json::parse(text)["type"], "error") << text;
    EXPECT_EQ(json::parse(text)["error"]["type"], "overloaded_error") << text;
  }
  EXPECT_TRUE(engine_->added().empty());
}

}  // namespace
}  // namespace chat_http_test
}  // namespace tandem::server
