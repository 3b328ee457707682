// Starts HttpServer on an ephemeral port with the fake engine and tokenizer and speaks real
// HTTP/1.1 to it with a Beast client.
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

#include "testing.h"

namespace tandem::server {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using net::ip::tcp;
using nlohmann::json;

struct Reply {
  int status = 0;
  std::string body;
  json Json() const { return json::parse(body); }
};

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerConfig config) {
    config.host = "127.0.0.1";
    config.port = 0;
    if (config.served_model_names.empty()) config.served_model_names = {"tiny"};
    config.max_model_len = 128;
    config.eos_token_ids = {257};
    server_ =
        std::make_unique<HttpServer>(config, engine_, std::make_shared<testing::FakeTokenizer>());
    ASSERT_TRUE(server_->Start().ok());
    thread_ = std::thread([this] { server_->Run(); });
  }
  void SetUp() override { engine_ = std::make_shared<testing::FakeEngineClient>(); }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }

  Reply Send(http::verb method, const std::string& target, const std::string& body = "",
             const std::string& auth = "") {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect({net::ip::make_address("127.0.0.1"), server_->port()});
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, "localhost");
    request.set(http::field::content_type, "application/json");
    if (!auth.empty()) request.set(http::field::authorization, auth);
    request.body() = body;
    request.prepare_payload();
    http::write(socket, request);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    boost::beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec) return {0, ec.message()};
    return {static_cast<int>(parser.get().result_int()), parser.get().body()};
  }
  Reply Post(const std::string& target, const json& body, const std::string& auth = "") {
    return Send(http::verb::post, target, body.dump(), auth);
  }

  std::shared_ptr<testing::FakeEngineClient> engine_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

// The `data:` payloads of an SSE body, in order.
std::vector<std::string> SseData(const std::string& body) {
  std::vector<std::string> events;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const size_t end = body.find("\n\n", pos);
    events.push_back(body.substr(pos + 6, end - pos - 6));
    pos = end;
  }
  return events;
}

TEST_F(HttpServerTest, CompletionEchoesPromptPlusOneWithExactUsage) {
  StartServer({});
  const Reply reply =
      Post("/v1/completions", {{"model", "tiny"}, {"prompt", "abc"}, {"max_tokens", 5}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json body = reply.Json();
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["model"], "tiny");
  EXPECT_EQ(body["choices"][0]["text"], "bcdbc");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(body["usage"]["completion_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"], 8);
  // vLLM: null unless --enable-prompt-tokens-details.
  ASSERT_TRUE(body["usage"].contains("prompt_tokens_details"));
  EXPECT_TRUE(body["usage"]["prompt_tokens_details"].is_null());
}

TEST_F(HttpServerTest, PromptTokensDetailsShowCachedTokensWithTheFlag) {
  ServerConfig config;
  config.enable_prompt_tokens_details = true;
  config.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}";
  StartServer(config);
  const Reply reply = Post("/v1/completions", {{"prompt", "abc"}, {"max_tokens", 2}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.Json()["usage"]["prompt_tokens_details"], json({{"cached_tokens", 2}}));
  const Reply chat =
      Post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "abc"}}}},
                                    {"max_tokens", 2},
                                    {"stream", true},
                                    {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  const std::vector<std::string> events = SseData(chat.body);
  ASSERT_GE(events.size(), 2u);
  const json usage_chunk = json::parse(events[events.size() - 2]);  // before [DONE]
  EXPECT_EQ(usage_chunk["usage"]["prompt_tokens_details"], json({{"cached_tokens", 2}}));
}

TEST_F(HttpServerTest, NChoicesFanOutWithSeedPlusIndexAndReturnTokenIds) {
  StartServer({});
  const Reply reply = Post(
      "/v1/completions",
      {{"prompt", "ab"}, {"max_tokens", 2}, {"n", 2}, {"seed", 10}, {"return_token_ids", true}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json body = reply.Json();
  ASSERT_EQ(body["choices"].size(), 2u);
  EXPECT_EQ(body["choices"][1]["token_ids"], json({'b', 'c'}));
  EXPECT_EQ(body["choices"][0]["prompt_token_ids"], json({'a', 'b'}));
  EXPECT_EQ(body["usage"]["completion_tokens"], 4);
  const auto added = engine_->added();
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].sampling.seed + 1, added[1].sampling.seed);
  EXPECT_EQ(added[1].request_id, body["id"].get<std::string>() + "-1");
}

TEST_F(HttpServerTest, StreamingSendsChunksUsageAndDone) {
  StartServer({});
  const Reply reply = Post("/v1/completions", {{"prompt", "abc"},
                                               {"max_tokens", 3},
                                               {"stream", true},
                                               {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(reply.status, 200);
  const auto events = SseData(reply.body);
  ASSERT_GE(events.size(), 3u) << reply.body;
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    text += json::parse(events[i])["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, "bcd");
  const json usage_chunk = json::parse(events[events.size() - 2]);
  EXPECT_TRUE(usage_chunk["choices"].empty());
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], 3);
  EXPECT_EQ(json::parse(events[events.size() - 3])["choices"][0]["finish_reason"], "length");
}

TEST_F(HttpServerTest, StopStringEndsWithStopAndAbortsTheEngineRequest) {
  StartServer({});
  const Reply reply =
      Post("/v1/completions", {{"prompt", "abcdefgh"}, {"max_tokens", 50}, {"stop", "de"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json body = reply.Json();
  EXPECT_EQ(body["choices"][0]["text"], "bc");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(body["choices"][0]["stop_reason"], "de");
  // The abort is sent right after the response is queued: allow it a moment.
  const std::string engine_id = body["id"].get<std::string>() + "-0";
  for (int i = 0; i < 200 && engine_->aborted().count(engine_id) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(engine_->aborted().count(engine_id), 1u);
  EXPECT_EQ(engine_->num_running(), 0u);
}

TEST_F(HttpServerTest, ErrorStatuses) {
  ServerConfig config;
  config.api_keys = {"k"};
  config.max_body_bytes = 1024;
  StartServer(config);
  const std::string auth = "Bearer k";
  EXPECT_EQ(Post("/v1/completions", {{"prompt", "a"}}).status, 401);
  EXPECT_EQ(Post("/v1/completions", {{"prompt", "a"}}, "Bearer wrong").status, 401);
  EXPECT_EQ(Send(http::verb::get, "/health").status, 200);  // not under /v1: no key needed
  EXPECT_EQ(Post("/v1/nope", json::object(), auth).status, 404);
  EXPECT_EQ(Send(http::verb::get, "/v1/completions", "", auth).status, 405);
  EXPECT_EQ(Post("/v1/completions", {{"prompt", std::string(2000, 'a')}}, auth).status, 413);
  const Reply bad_json = Send(http::verb::post, "/v1/completions", "{not json", auth);
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_EQ(bad_json.Json()["error"]["type"], "BadRequestError");
  const Reply bad_temp = Post("/v1/completions", {{"prompt", "a"}, {"temperature", -1}}, auth);
  EXPECT_EQ(bad_temp.status, 400);
  EXPECT_EQ(bad_temp.Json()["error"]["param"], "temperature");
  const Reply unknown_model = Post("/v1/completions", {{"prompt", "a"}, {"model", "x"}}, auth);
  EXPECT_EQ(unknown_model.status, 404);
  const Reply no_template =
      Post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}, auth);
  EXPECT_EQ(no_template.status, 400);
  EXPECT_EQ(Post("/v1/completions", {{"prompt", "ab"}, {"max_tokens", 2}}, auth).status, 200);
}

TEST_F(HttpServerTest, HealthIs503UntilTheEngineIsReady) {
  engine_->set_ready(false);
  StartServer({});
  EXPECT_EQ(Send(http::verb::get, "/health").status, 503);
  EXPECT_EQ(Send(http::verb::get, "/ping").status, 503);
  engine_->set_ready(true);
  const Reply health = Send(http::verb::get, "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "");
}

TEST_F(HttpServerTest, ModelsVersionAndMetrics) {
  ServerConfig config;
  config.served_model_names = {"tiny", "alias"};
  config.model_root = "/models/tiny";
  StartServer(config);
  const json models = Send(http::verb::get, "/v1/models").Json();
  ASSERT_EQ(models["data"].size(), 2u);
  EXPECT_EQ(models["data"][0]["id"], "tiny");
  EXPECT_EQ(models["data"][0]["root"], "/models/tiny");
  EXPECT_EQ(models["data"][0]["max_model_len"], 128);
  EXPECT_TRUE(Send(http::verb::get, "/version").Json().contains("version"));
  const Reply metrics = Send(http::verb::get, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("vllm:num_requests_running{model_name=\"tiny\",engine=\"0\"} 3"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("tandem:kv_cache_usage_perc{model_name=\"tiny\",engine=\"0\"} 0.25"),
            std::string::npos);
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  StartServer({});
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), server_->port()});
  boost::beast::flat_buffer buffer;
  for (int i = 0; i < 3; ++i) {
    http::request<http::string_body> request{http::verb::get, "/v1/models", 11};
    request.set(http::field::host, "localhost");
    http::write(socket, request);
    http::response<http::string_body> response;
    http::read(socket, buffer, response);
    EXPECT_EQ(response.result_int(), 200u);
  }
}

TEST_F(HttpServerTest, ClientDisconnectMidStreamAbortsTheEngineRequest) {
  engine_ = std::make_shared<testing::FakeEngineClient>(/*step_ms=*/20);  // 120 steps: 2.4 s
  StartServer({});
  {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect({net::ip::make_address("127.0.0.1"), server_->port()});
    http::request<http::string_body> request{http::verb::post, "/v1/completions", 11};
    request.set(http::field::host, "localhost");
    request.body() =
        json({{"prompt", "abc"}, {"max_tokens", 120}, {"stream", true}, {"ignore_eos", true}})
            .dump();
    request.prepare_payload();
    http::write(socket, request);
    char first[64];
    socket.read_some(net::buffer(first));  // the stream has started
  }                                        // socket closed
  for (int i = 0; i < 200 && engine_->aborted().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(engine_->aborted().size(), 1u);
  EXPECT_EQ(engine_->num_running(), 0u);
}

}  // namespace
}  // namespace tandem::server
