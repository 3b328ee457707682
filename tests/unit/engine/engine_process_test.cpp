#include "engine/engine_process.h"

#include <gtest/gtest.h>

#include <thread>

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

  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kAddRequest,
                                              MakeRequest("a", Iota(6), 3))).ok());
  // Too long for max_model_len 64: answered at once with kError.
  ASSERT_TRUE(to_engine.Send(protocol::Encode(MessageType::kAddRequest,
                                              MakeRequest("bad", Iota(60), 10))).ok());
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

}  // namespace
}  // namespace tandem::engine
