// DP start-up handshake over real ZeroMQ: accept, mismatch named, duplicate and out-of-range
// ranks refused, deadline names the missing ranks and the address.
#include "ipc/handshake.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "core/clock.h"
#include "ipc/zmq_socket.h"

namespace tandem::ipc {
namespace {

Settings Base() { return {{"model", "m.gguf"}, {"--seed", "1024"}}; }

HandshakeServerOptions Options(int port, int dp_size) {
  HandshakeServerOptions o;
  o.bind_endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  o.dp_size = dp_size;
  o.host = "10.0.0.1";
  o.settings = Base();
  o.output_endpoints = {"tcp://127.0.0.1:1"};
  o.stats_endpoint = "tcp://127.0.0.1:2";
  return o;
}

protocol::EngineHello Hello(int rank, Settings settings = Base(), std::string host = "10.0.0.2") {
  protocol::EngineHello h;
  h.dp_rank = rank;
  h.host = std::move(host);
  h.pid = 4242 + rank;
  h.input_endpoint = "tcp://10.0.0.2:5555";
  h.settings = std::move(settings);
  return h;
}

TEST(HandshakeTest, MismatchNamesTheDifferingSettingAndBothValues) {
  Settings theirs = {{"model", "m.gguf"}, {"--seed", "7"}};
  const std::string msg = DescribeSettingsMismatch(Base(), "10.0.0.1", theirs, "10.0.0.2", 1);
  EXPECT_NE(msg.find("--seed 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--seed 1024"), std::string::npos) << msg;
  EXPECT_NE(msg.find("10.0.0.2"), std::string::npos) << msg;
  EXPECT_EQ(DescribeSettingsMismatch(Base(), "a", Base(), "b", 1), "");
}

TEST(HandshakeTest, AllRanksHelloThenReadyCompletesAndDeliversEndpoints) {
  const int port = *PickFreeTcpPort("127.0.0.1");
  HandshakeServer server(Options(port, 2));
  ASSERT_TRUE(server.Bind().ok());
  std::vector<int> ready;
  std::thread engines([&] {
    for (int rank : {1, 0}) {
      HandshakeClient client("tcp://127.0.0.1:" + std::to_string(port));
      auto reply = client.Hello(Hello(rank), MonotonicSeconds() + 5);
      ASSERT_TRUE(reply.ok()) << reply.status().message();
      EXPECT_EQ(reply->output_endpoints, std::vector<std::string>{"tcp://127.0.0.1:1"});
      EXPECT_EQ(reply->stats_endpoint, "tcp://127.0.0.1:2");
      ASSERT_TRUE(client.Ready({rank, 10}).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  Status st = server.RunUntilAllReady(
      MonotonicSeconds() + 10, [&](const protocol::EngineHello& h) { ready.push_back(h.dp_rank); });
  engines.join();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(ready, (std::vector<int>{1, 0}));
}

// Hybrid / external DP load balancing: an API machine asks where the coordinator publishes;
// a wrong rank range or other settings refuse that machine only, and start-up goes on.
TEST(HandshakeTest, ApiMachineGetsTheCoordinatorFeedOrIsRefusedWithoutStoppingTheHead) {
  const int port = *PickFreeTcpPort("127.0.0.1");
  HandshakeServerOptions options = Options(port, 2);
  options.publish_endpoint = "tcp://127.0.0.1:3";
  HandshakeServer server(options);
  ASSERT_TRUE(server.Bind().ok());
  auto api_hello = [](int32_t first, int32_t count, Settings settings) {
    protocol::ApiServerHello h;
    h.host = "10.0.0.3";
    h.pid = 77;
    h.first_rank = first;
    h.num_ranks = count;
    h.settings = std::move(settings);
    return h;
  };
  std::vector<std::string> errors;
  std::string publish;
  std::thread machines([&] {
    const std::string head = "tcp://127.0.0.1:" + std::to_string(port);
    for (const auto& hello : {api_hello(0, 1, Base()), api_hello(1, 2, Base()),
                              api_hello(1, 1, {{"model", "m.gguf"}, {"--seed", "7"}})}) {
      HandshakeClient client(head);
      auto reply = client.Hello(hello, MonotonicSeconds() + 5);
      errors.push_back(reply.ok() ? "" : reply.status().message());
    }
    HandshakeClient accepted(head);
    auto reply = accepted.Hello(api_hello(1, 1, Base()), MonotonicSeconds() + 5);
    if (reply.ok()) publish = reply->publish_endpoint;
    for (int rank : {0, 1}) {  // the engines join after all
      HandshakeClient engine(head);
      if (engine.Hello(Hello(rank), MonotonicSeconds() + 5).ok()) (void)engine.Ready({rank, 1});
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  Status st = server.RunUntilAllReady(MonotonicSeconds() + 10, [](const protocol::EngineHello&) {});
  machines.join();
  EXPECT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_NE(errors[0].find("DP ranks 0..0 of the API machine 10.0.0.3 (pid 77) are out of range"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("DP ranks 1..2"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("--seed 7"), std::string::npos) << errors[2];
  EXPECT_EQ(publish, "tcp://127.0.0.1:3");
}

TEST(HandshakeTest, EngineStartedBeforeTheHeadStillJoins) {
  const int port = *PickFreeTcpPort("127.0.0.1");
  Result<protocol::HandshakeReply> reply = Unavailable("not run");
  std::thread engine([&] {
    HandshakeClient client("tcp://127.0.0.1:" + std::to_string(port));
    reply = client.Hello(Hello(0), MonotonicSeconds() + 10);
    if (reply.ok()) (void)client.Ready({0, 1});
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // head starts late
  HandshakeServer server(Options(port, 1));
  ASSERT_TRUE(server.Bind().ok());
  Status st = server.RunUntilAllReady(MonotonicSeconds() + 10, [](const protocol::EngineHello&) {});
  engine.join();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(reply.ok());
}

TEST(HandshakeTest, MismatchIsFatalForBothSides) {
  const int port = *PickFreeTcpPort("127.0.0.1");
  HandshakeServer server(Options(port, 1));
  ASSERT_TRUE(server.Bind().ok());
  Result<protocol::HandshakeReply> reply = Unavailable("not run");
  std::thread engine([&] {
    HandshakeClient client("tcp://127.0.0.1:" + std::to_string(port));
    reply = client.Hello(Hello(0, {{"model", "m.gguf"}, {"--seed", "7"}}), MonotonicSeconds() + 5);
  });
  Status st = server.RunUntilAllReady(MonotonicSeconds() + 5, [](const protocol::EngineHello&) {});
  engine.join();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--seed"), std::string::npos) << st.message();
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("--seed 7"), std::string::npos);
}

TEST(HandshakeTest, DuplicateAndOutOfRangeRanksAreRefusedNamingBothMachines) {
  const int port = *PickFreeTcpPort("127.0.0.1");
  HandshakeServer server(Options(port, 2));
  ASSERT_TRUE(server.Bind().ok());
  Result<protocol::HandshakeReply> dup = Unavailable("not run");
  Result<protocol::HandshakeReply> range = Unavailable("not run");
  std::thread engines([&] {
    const std::string ep = "tcp://127.0.0.1:" + std::to_string(port);
    HandshakeClient first(ep), second(ep), third(ep), other(ep);
    ASSERT_TRUE(first.Hello(Hello(1), MonotonicSeconds() + 5).ok());
    dup = second.Hello(Hello(1, Base(), "10.0.0.3"), MonotonicSeconds() + 5);
    range = third.Hello(Hello(5), MonotonicSeconds() + 5);
    ASSERT_TRUE(first.Ready({1, 1}).ok());
    ASSERT_TRUE(other.Hello(Hello(0), MonotonicSeconds() + 5).ok());
    ASSERT_TRUE(other.Ready({0, 1}).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  Status st = server.RunUntilAllReady(MonotonicSeconds() + 10, [](const protocol::EngineHello&) {});
  engines.join();
  EXPECT_TRUE(st.ok()) << st.message();
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("10.0.0.2"), std::string::npos) << dup.status().message();
  EXPECT_NE(dup.status().message().find("10.0.0.3"), std::string::npos) << dup.status().message();
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.status().message().find("out of range"), std::string::npos);
}

TEST(HandshakeTest, DeadlineNamesMissingRanksAndTheAddress) {
  const int port = *PickFreeTcpPort("127.0.0.1");
  HandshakeServer server(Options(port, 2));
  ASSERT_TRUE(server.Bind().ok());
  Status st =
      server.RunUntilAllReady(MonotonicSeconds() + 0.3, [](const protocol::EngineHello&) {});
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("0, 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

TEST(HandshakeTest, EngineWithNoHeadGivesUpAtTheDeadlineNamingTheAddress) {
  const int port = *PickFreeTcpPort("127.0.0.1");
  HandshakeClient client("tcp://127.0.0.1:" + std::to_string(port));
  auto reply = client.Hello(Hello(1), MonotonicSeconds() + 0.3);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

}  // namespace
}  // namespace tandem::ipc
