// Coordinator: engines' stats become the snapshot's rank loads; an older picture that arrives
// after a newer one (an engine has two stats sockets) does not undo it.
#include "router/coordinator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "ipc/ipc_path.h"
#include "ipc/zmq_socket.h"
#include "protocol/engine_output.h"
#include "protocol/message.h"

namespace tandem::router {
namespace {

using protocol::MessageType;

protocol::EngineStats Stats(int32_t rank, int64_t held, int64_t received, int64_t finished) {
  protocol::EngineStats s;
  s.dp_rank = rank;
  s.num_held_tokens = held;
  s.num_received_by_client = {received};
  s.num_requests_finished = finished;
  return s;
}

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 300 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

TEST(CoordinatorTest, AnOlderPictureOfARankDoesNotReplaceANewerOne) {
  CoordinatorOptions o;
  o.dp_size = 2;
  o.stats_endpoint = ipc::MakeIpcEndpoint("test-coord-stats");
  o.publish_endpoint = ipc::MakeIpcEndpoint("test-coord-pub");
  Coordinator coordinator(o);
  ASSERT_TRUE(coordinator.Start().ok());
  coordinator.OnEngineReady(0, "tcp://rank0");
  coordinator.OnEngineReady(1, "tcp://rank1");
  ipc::ZmqSocket engine(ipc::SocketKind::kPush);
  ASSERT_TRUE(engine.Connect(o.stats_endpoint).ok());
  auto send = [&](const protocol::EngineStats& s) {
    ASSERT_TRUE(engine.Send(protocol::Encode(MessageType::kEngineStats, s)).ok());
  };
  auto rank = [&](int r) { return coordinator.CurrentSnapshot().ranks[r]; };

  send(Stats(0, /*held=*/30, /*received=*/3, /*finished=*/0));
  ASSERT_TRUE(WaitFor([&] { return rank(0).num_held_tokens == 30; }));
  send(Stats(0, 10, 3, 2));  // two finished
  ASSERT_TRUE(WaitFor([&] { return rank(0).num_held_tokens == 10; }));
  send(Stats(0, 30, 3, 0));  // the heartbeat thread's copy from before they finished
  send(Stats(0, 20, 2, 2));  // fewer received: older too
  send(Stats(1, 7, 1, 0));   // same socket, so once rank 1 shows it, rank 0's were read
  ASSERT_TRUE(WaitFor([&] { return rank(1).num_held_tokens == 7; }));
  EXPECT_EQ(rank(0).num_held_tokens, 10);
  EXPECT_EQ(rank(0).num_requests_finished, 2);
  EXPECT_EQ(rank(0).num_received_by_client, std::vector<int64_t>{3});
  send(Stats(0, 15, 4, 2));  // newer: one more received
  ASSERT_TRUE(WaitFor([&] { return rank(0).num_held_tokens == 15; }));
  coordinator.Stop();
}

}  // namespace
}  // namespace tandem::router
