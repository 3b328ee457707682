#include "engine/engine_process.h"

#include <gtest/gtest.h>

#include <thread>

#include "ipc/ipc_path.h"
#include "ipc/zmq_socket.h"
#include "protocol/message.h"
#include "testing.h"

namespace tandem::engine {
namespace {

using protocol::MessageType;
using testing::FakeExecutor;
using testing::Iota;
using testing::MakeConfig;
using testing::MakeRequest;

// Receives the next frame or fails the test after 5 s.
std::string RecvFrame(ipc::ZmqSocket& socket) {
  Result<std::optional<std::string>> frame = socket.Recv(5000);
  EXPECT_TRUE(frame.ok() && frame->has_value()) << "no frame from the engine loop";
  return frame.ok() && frame->has_value() ? **frame : std::string();
}

TEST(EngineProcessTest, ServesRequestsOverZeroMqUntilShutdown) {
  const SchedulerConfig config = MakeConfig();
  EngineCore core(config, std::make_unique<FakeExecutor>(config.num_gpu_blocks, config.block_size),
                  0);
  EngineLoopOptions options;
  options.input_endpoint = ipc::MakeIpcEndpoint("engine-test-in");
  options.output_endpoint = ipc::MakeIpcEndpoint("engine-test-out");
  ipc::ZmqSocket to_engine(ipc::SocketKind::kPush);
  ipc::ZmqSocket from_engine(ipc::SocketKind::kPull);
  ASSERT_TRUE(to_engine.Bind(options.input_endpoint).ok());
  ASSERT_TRUE(from_engine.Bind(options.output_endpoint).ok());

  int loop_rc = -1;
  std::thread loop([&] { loop_rc = RunEngineLoop(core, options); });

  std::string frame = RecvFrame(from_engine);
  ASSERT_EQ(*protocol::PeekType(frame), MessageType::kReady);

  ASSERT_TRUE(
      to_engine.Send(protocol::Encode(MessageType::kAddRequest, MakeRequest("a", Iota(6), 3)))
          .ok());
  // Too long for max_model_len 64: answered at once with kError.
  ASSERT_TRUE(
      to_engine.Send(protocol::Encode(MessageType::kAddRequest, MakeRequest("bad", Iota(60), 10)))
          .ok());
  std::vector<int32_t> tokens;
  bool finished = false, rejected = false;
  while (!(finished && rejected)) {
    frame = RecvFrame(from_engine);
    if (frame.empty()) break;
    ASSERT_EQ(*protocol::PeekType(frame), MessageType::kOutputs);
    protocol::EngineOutputs outputs;
    ASSERT_TRUE(protocol::Decode(frame, &outputs).ok());
    for (const protocol::EngineOutput& output : outputs.outputs) {
      if (output.request_id == "bad") {
        EXPECT_EQ(output.finish_reason, static_cast<uint8_t>(protocol::FinishReason::kError));
        EXPECT_NE(output.error.find("maximum context length"), std::string::npos);
        rejected = true;
        continue;
      }
      tokens.insert(tokens.end(), output.new_token_ids.begin(), output.new_token_ids.end());
      finished = finished || output.finish_reason != 0;
    }
  }
  EXPECT_EQ(tokens, (std::vector<int32_t>{6, 7, 8}));

  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kShutdown, 0)).ok());
  loop.join();
  EXPECT_EQ(loop_rc, 0);
}

TEST(EngineProcessTest, AbortFrameEndsARequestAndIdleLoopSendsHeartbeats) {
  const SchedulerConfig config = MakeConfig(/*num_gpu_blocks=*/256, 64, 16, /*max_model_len=*/1024);
  EngineCore core(config, std::make_unique<FakeExecutor>(config.num_gpu_blocks, config.block_size),
                  3);
  EngineLoopOptions options;
  options.input_endpoint = ipc::MakeIpcEndpoint("engine-test-in2");
  options.output_endpoint = ipc::MakeIpcEndpoint("engine-test-out2");
  options.heartbeat_interval_s = 0.05;
  ipc::ZmqSocket to_engine(ipc::SocketKind::kPush);
  ipc::ZmqSocket from_engine(ipc::SocketKind::kPull);
  ASSERT_TRUE(to_engine.Bind(options.input_endpoint).ok());
  ASSERT_TRUE(from_engine.Bind(options.output_endpoint).ok());
  int loop_rc = -1;
  std::thread loop([&] { loop_rc = RunEngineLoop(core, options); });
  ASSERT_EQ(*protocol::PeekType(RecvFrame(from_engine)), MessageType::kReady);

  // The abort frame arrives long before the request's 1000 steps can end it.
  std::string add = protocol::Encode(MessageType::kAddRequest, MakeRequest("a", Iota(4), 1000));
  protocol::AbortRequests abort{{"a"}};
  ASSERT_TRUE(to_engine.Send(add).ok());
  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kAbortRequests, abort)).ok());
  uint8_t finish_reason = 0;
  int heartbeats_after_finish = 0;
  while (heartbeats_after_finish < 2) {
    std::string frame = RecvFrame(from_engine);
    if (frame.empty()) break;
    protocol::EngineOutputs outputs;
    ASSERT_TRUE(protocol::Decode(frame, &outputs).ok());
    EXPECT_EQ(outputs.stats.dp_rank, 3);
    for (const protocol::EngineOutput& output : outputs.outputs) {
      finish_reason = output.finish_reason;
    }
    if (finish_reason != 0 && outputs.outputs.empty()) {
      EXPECT_EQ(outputs.stats.num_running + outputs.stats.num_waiting, 0);
      ++heartbeats_after_finish;
    }
  }
  EXPECT_EQ(heartbeats_after_finish, 2);
  EXPECT_EQ(finish_reason, static_cast<uint8_t>(protocol::FinishReason::kAbort));

  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kShutdown, 0)).ok());
  loop.join();
  EXPECT_EQ(loop_rc, 0);
}

TEST(EngineProcessTest, CoordinatorHearsOfEachArrivalAndFinishAtOnceCountedByApiServer) {
  const SchedulerConfig config = MakeConfig();
  EngineCore core(config, std::make_unique<FakeExecutor>(config.num_gpu_blocks, config.block_size),
                  0);
  EngineLoopOptions options;
  options.input_endpoint = ipc::MakeIpcEndpoint("engine-test-in3");
  options.output_endpoints = {ipc::MakeIpcEndpoint("engine-test-out3a"),
                              ipc::MakeIpcEndpoint("engine-test-out3b")};
  options.stats_endpoint = ipc::MakeIpcEndpoint("engine-test-stats3");
  // Neither the interval nor the heartbeat can deliver within the test: only the reports an
  // arrival or a finish forces can.
  options.stats_interval_s = 600;
  options.heartbeat_interval_s = 600;
  ipc::ZmqSocket to_engine(ipc::SocketKind::kPush);
  ipc::ZmqSocket api0(ipc::SocketKind::kPull), api1(ipc::SocketKind::kPull);
  ipc::ZmqSocket coordinator(ipc::SocketKind::kPull);
  ASSERT_TRUE(to_engine.Bind(options.input_endpoint).ok());
  ASSERT_TRUE(api0.Bind(options.output_endpoints[0]).ok());
  ASSERT_TRUE(api1.Bind(options.output_endpoints[1]).ok());
  ASSERT_TRUE(coordinator.Bind(options.stats_endpoint).ok());
  int loop_rc = -1;
  std::thread loop([&] { loop_rc = RunEngineLoop(core, options); });
  ASSERT_EQ(*protocol::PeekType(RecvFrame(api1)), MessageType::kReady);

  // From API server 1: one request the engine refuses (too long), one it serves.
  protocol::EngineRequest bad = MakeRequest("bad", Iota(60), 10),
                          good = MakeRequest("a", Iota(6), 3);
  bad.client_index = good.client_index = 1;
  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kAddRequest, bad)).ok());
  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kAddRequest, good)).ok());
  protocol::EngineStats stats;
  bool held_seen = false;
  while (true) {
    std::string frame = RecvFrame(coordinator);
    if (frame.empty()) break;
    ASSERT_TRUE(protocol::Decode(frame, &stats).ok());
    held_seen = held_seen || stats.num_held_tokens == 6 + 3;
    if (stats.num_requests_finished >= 1 && stats.num_held_tokens == 0) break;  // 'a' is done
  }
  EXPECT_TRUE(held_seen) << "the arrival of 'a' was not reported before it finished";
  EXPECT_EQ(stats.num_held_tokens, 0);
  EXPECT_EQ(stats.num_received_by_client, (std::vector<int64_t>{0, 2}))
      << "both of API server 1's requests count as received, the refused one too";

  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kShutdown, 0)).ok());
  loop.join();
  EXPECT_EQ(loop_rc, 0);
}

}  // namespace
}  // namespace tandem::engine
