// MpEngineClient against a fake engine speaking the real ZeroMQ + msgpack protocol.
#include "router/mp_engine_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ipc/zmq_socket.h"
#include "protocol/message.h"

namespace tandem::router {
namespace {

using protocol::EngineOutput;
using protocol::EngineOutputs;
using protocol::FinishReason;
using protocol::MessageType;

struct FakeEngine {
  ipc::ZmqSocket input{ipc::SocketKind::kPull};
  ipc::ZmqSocket output{ipc::SocketKind::kPush};
};

MpEngineClientOptions MakeOptions(const std::string& tag, double heartbeat_timeout_s = 5.0) {
  MpEngineClientOptions o;
  o.input_endpoint = ipc::MakeIpcEndpoint("test-in-" + tag);
  o.output_endpoint = ipc::MakeIpcEndpoint("test-out-" + tag);
  o.heartbeat_timeout_s = heartbeat_timeout_s;
  return o;
}

void ConnectFake(FakeEngine& fake, const MpEngineClientOptions& o) {
  ASSERT_TRUE(fake.input.Bind(o.input_endpoint).ok());
  ASSERT_TRUE(fake.output.Connect(o.output_endpoint).ok());
  protocol::EngineStats stats;
  stats.num_gpu_blocks = 42;
  ASSERT_TRUE(fake.output.Send(protocol::Encode(MessageType::kReady, stats)).ok());
}

EngineOutputs OneOutput(const std::string& id, int32_t token, FinishReason reason) {
  EngineOutputs outs;
  EngineOutput out;
  out.request_id = id;
  out.new_token_ids = {token};
  out.finish_reason = static_cast<uint8_t>(reason);
  outs.outputs.push_back(out);
  return outs;
}

TEST(MpEngineClientTest, RoutesOutputsToTheirRequestInOrderAndStopsAfterFinish) {
  auto o = MakeOptions("routes");
  MpEngineClient client(o);
  FakeEngine fake;
  ConnectFake(fake, o);
  ASSERT_TRUE(client.Start().ok());
  ASSERT_TRUE(client.WaitReady(5));
  EXPECT_EQ(client.LatestStats().num_gpu_blocks, 42);

  std::vector<int32_t> got;
  std::atomic<bool> finished{false};
  protocol::EngineRequest req;
  req.request_id = "r1";
  req.prompt_token_ids = {1, 2, 3};
  ASSERT_TRUE(client.AddRequest(req, [&](const EngineOutput& out) {
    got.insert(got.end(), out.new_token_ids.begin(), out.new_token_ids.end());
    if (out.finish_reason != 0) finished = true;
  }).ok());
  auto frame = fake.input.Recv(2000);
  ASSERT_TRUE(frame.ok() && frame->has_value());
  protocol::EngineRequest seen;
  ASSERT_TRUE(protocol::Decode(**frame, &seen).ok());
  EXPECT_EQ(seen.prompt_token_ids, (std::vector<int32_t>{1, 2, 3}));

  ASSERT_TRUE(fake.output.Send(protocol::Encode(MessageType::kOutputs,
                                                OneOutput("r1", 7, FinishReason::kNone))).ok());
  ASSERT_TRUE(fake.output.Send(protocol::Encode(MessageType::kOutputs,
                                                OneOutput("r1", 8, FinishReason::kLength))).ok());
  ASSERT_TRUE(fake.output.Send(protocol::Encode(MessageType::kOutputs,
                                                OneOutput("r1", 9, FinishReason::kNone))).ok());
  for (int i = 0; i < 200 && !finished; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(got, (std::vector<int32_t>{7, 8}));  // nothing after the finishing output
}

TEST(MpEngineClientTest, AbortSendsAbortAndDropsLateOutputs) {
  auto o = MakeOptions("abort");
  MpEngineClient client(o);
  FakeEngine fake;
  ConnectFake(fake, o);
  ASSERT_TRUE(client.Start().ok());
  ASSERT_TRUE(client.WaitReady(5));
  std::atomic<int> calls{0};
  protocol::EngineRequest req;
  req.request_id = "r2";
  ASSERT_TRUE(client.AddRequest(req, [&](const EngineOutput&) { ++calls; }).ok());
  client.AbortRequest("r2");
  auto add = fake.input.Recv(2000);
  auto abort = fake.input.Recv(2000);
  ASSERT_TRUE(abort.ok() && abort->has_value());
  EXPECT_EQ(*protocol::PeekType(**abort), MessageType::kAbortRequests);
  protocol::AbortRequests ids;
  ASSERT_TRUE(protocol::Decode(**abort, &ids).ok());
  EXPECT_EQ(ids.request_ids, std::vector<std::string>{"r2"});
  ASSERT_TRUE(fake.output.Send(protocol::Encode(MessageType::kOutputs,
                                                OneOutput("r2", 5, FinishReason::kNone))).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(calls.load(), 0);
}

TEST(MpEngineClientTest, SilentEngineIsDeclaredDeadAndInFlightRequestsFail) {
  auto o = MakeOptions("dead", /*heartbeat_timeout_s=*/0.3);
  MpEngineClient client(o);
  FakeEngine fake;
  ConnectFake(fake, o);
  ASSERT_TRUE(client.Start().ok());
  ASSERT_TRUE(client.WaitReady(5));
  std::atomic<uint8_t> reason{0};
  std::string error;
  protocol::EngineRequest req;
  req.request_id = "r3";
  ASSERT_TRUE(client.AddRequest(req, [&](const EngineOutput& out) {
    error = out.error;
    reason = out.finish_reason;
  }).ok());
  for (int i = 0; i < 200 && reason == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(reason.load(), static_cast<uint8_t>(FinishReason::kError));
  EXPECT_NE(error.find("died"), std::string::npos) << error;
  EXPECT_FALSE(client.IsReady());
  EXPECT_EQ(client.AddRequest(req, [](const EngineOutput&) {}).code(), StatusCode::kUnavailable);
}

TEST(MpEngineClientTest, RequestsBeforeReadyAreRefusedAsUnavailable) {
  auto o = MakeOptions("early");
  MpEngineClient client(o);
  ASSERT_TRUE(client.Start().ok());
  protocol::EngineRequest req;
  req.request_id = "r4";
  EXPECT_EQ(client.AddRequest(req, [](const EngineOutput&) {}).code(), StatusCode::kUnavailable);
  EXPECT_FALSE(client.WaitReady(0.1));
}

}  // namespace
}  // namespace tandem::router
