// MpEngineClient against a fake engine speaking the real ZeroMQ + msgpack protocol.
#include "router/mp_engine_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ipc/ipc_path.h"
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
  ASSERT_TRUE(client
                  .AddRequest(req,
                              [&](const EngineOutput& out) {
                                got.insert(got.end(), out.new_token_ids.begin(),
                                           out.new_token_ids.end());
                                if (out.finish_reason != 0) finished = true;
                              })
                  .ok());
  auto frame = fake.input.Recv(2000);
  ASSERT_TRUE(frame.ok() && frame->has_value());
  protocol::EngineRequest seen;
  ASSERT_TRUE(protocol::Decode(**frame, &seen).ok());
  EXPECT_EQ(seen.prompt_token_ids, (std::vector<int32_t>{1, 2, 3}));

  ASSERT_TRUE(
      fake.output
          .Send(protocol::Encode(MessageType::kOutputs, OneOutput("r1", 7, FinishReason::kNone)))
          .ok());
  ASSERT_TRUE(
      fake.output
          .Send(protocol::Encode(MessageType::kOutputs, OneOutput("r1", 8, FinishReason::kLength)))
          .ok());
  ASSERT_TRUE(
      fake.output
          .Send(protocol::Encode(MessageType::kOutputs, OneOutput("r1", 9, FinishReason::kNone)))
          .ok());
  for (int i = 0; i < 200 && !finished; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(got, (std::vector<int32_t>{7, 8}));  // nothing after the finishing output
}

// A heartbeat travels on its own socket and may arrive after newer outputs: its older stats
// must not replace the newer ones (cumulative /metrics counters would step back).
TEST(MpEngineClientTest, StatsOlderThanTheHeldOnesAreIgnored) {
  auto o = MakeOptions("stale");
  MpEngineClient client(o);
  FakeEngine fake;
  ConnectFake(fake, o);
  ASSERT_TRUE(client.Start().ok());
  ASSERT_TRUE(client.WaitReady(5));
  std::atomic<bool> seen{false};
  protocol::EngineRequest req;
  req.request_id = "r";
  ASSERT_TRUE(client.AddRequest(req, [&](const EngineOutput&) { seen = true; }).ok());
  EngineOutputs newer;
  newer.stats.seq = 5;
  newer.stats.num_preemptions = 5;
  EngineOutputs older = OneOutput("r", 7, FinishReason::kNone);  // its callback: processed
  older.stats.seq = 4;
  older.stats.num_preemptions = 4;
  ASSERT_TRUE(fake.output.Send(protocol::Encode(MessageType::kOutputs, newer)).ok());
  ASSERT_TRUE(fake.output.Send(protocol::Encode(MessageType::kOutputs, older)).ok());
  for (int i = 0; i < 500 && !seen; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(seen);
  EXPECT_EQ(client.LatestStats().seq, 5);
  EXPECT_EQ(client.LatestStats().num_preemptions, 5);
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
  ASSERT_TRUE(
      fake.output
          .Send(protocol::Encode(MessageType::kOutputs, OneOutput("r2", 5, FinishReason::kNone)))
          .ok());
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
  ASSERT_TRUE(client
                  .AddRequest(req,
                              [&](const EngineOutput& out) {
                                error = out.error;
                                reason = out.finish_reason;
                              })
                  .ok());
  for (int i = 0; i < 200 && reason == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
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

// Data parallel: a fake coordinator publishes snapshots; fake engines PULL requests.
struct FakeDp {
  explicit FakeDp(const std::string& tag, int32_t dp_size) : engines(dp_size) {
    options.output_endpoint = ipc::MakeIpcEndpoint("test-dp-out-" + tag);
    options.snapshot_endpoint = ipc::MakeIpcEndpoint("test-dp-pub-" + tag);
    options.dp_size = dp_size;
    EXPECT_TRUE(publisher.Bind(options.snapshot_endpoint).ok());
    for (int32_t r = 0; r < dp_size; ++r) {
      engines[r].endpoint = ipc::MakeIpcEndpoint("test-dp-in" + std::to_string(r) + "-" + tag);
      EXPECT_TRUE(engines[r].input.Bind(engines[r].endpoint).ok());
    }
  }
  // Rank r's load in the next snapshot: ready and alive, `held` tokens, and how many of API
  // server 0's requests it has received.
  protocol::RankLoad Load(int32_t r, int64_t held, int64_t received) const {
    protocol::RankLoad load;
    load.dp_rank = r;
    load.ready = load.alive = true;
    load.input_endpoint = engines[r].endpoint;
    load.num_held_tokens = held;
    load.num_received_by_client = {received};
    return load;
  }
  void Publish(std::vector<protocol::RankLoad> loads) {
    protocol::LoadSnapshot snapshot;
    snapshot.seq = ++seq;
    snapshot.ranks = std::move(loads);
    ASSERT_TRUE(publisher.Send(protocol::Encode(MessageType::kLoadSnapshot, snapshot)).ok());
  }
  // The rank a request reached (-1 if none did within 2 s).
  int32_t Arrived() {
    for (int i = 0; i < 200; ++i) {
      for (size_t r = 0; r < engines.size(); ++r) {
        auto frame = engines[r].input.Recv(0);
        if (frame.ok() && frame->has_value()) return static_cast<int32_t>(r);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  struct Engine {
    ipc::ZmqSocket input{ipc::SocketKind::kPull};
    std::string endpoint;
  };
  MpEngineClientOptions options;
  ipc::ZmqSocket publisher{ipc::SocketKind::kPub};
  std::vector<Engine> engines;
  int64_t seq = 0;
};

protocol::EngineRequest Request(const std::string& id, int32_t max_tokens) {
  protocol::EngineRequest req;
  req.request_id = id;
  req.prompt_token_ids = {1, 2, 3};
  req.sampling.max_tokens = max_tokens;
  return req;
}

// Hybrid / external DP load balancing: an API server that serves ranks 1..2 of 3 never
// connects rank 0 (another machine's), is ready without it, spreads requests over its own
// ranks and refuses a pin to rank 0 naming its range.
TEST(MpEngineClientTest, ServesOnlyItsOwnRanksWithHybridLoadBalancing) {
  FakeDp dp("served", 3);
  dp.options.first_served_rank = 1;
  dp.options.num_served_ranks = 2;
  dp.options.policy = LoadBalancePolicy::kRoundRobin;
  MpEngineClient client(dp.options);
  ASSERT_TRUE(client.Start().ok());
  protocol::RankLoad remote = dp.Load(0, 0, 0);
  remote.ready = false;  // another machine's rank, still loading: not awaited
  for (int i = 0; i < 50 && !client.IsReady(); ++i) {
    dp.Publish({remote, dp.Load(1, 0, 0), dp.Load(2, 0, 0)});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(client.IsReady());
  dp.Publish({dp.Load(0, 0, 0), dp.Load(1, 0, 0), dp.Load(2, 0, 0)});  // rank 0 ready: ignored
  std::vector<int32_t> reached;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        client.AddRequest(Request("s" + std::to_string(i), 4), [](const EngineOutput&) {}).ok());
    reached.push_back(dp.Arrived());
  }
  std::sort(reached.begin(), reached.end());
  EXPECT_EQ(reached, (std::vector<int32_t>{1, 1, 2, 2}));
  protocol::EngineRequest pinned = Request("pinned", 4);
  pinned.data_parallel_rank = 0;
  const Status st = client.AddRequest(pinned, [](const EngineOutput&) {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("X-data-parallel-rank 0 is not served by this API server"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("serves DP rank(s) 1..2"), std::string::npos) << st.message();
  EXPECT_FALSE(client.ServesRank(0));
  EXPECT_TRUE(client.ServesRank(2));
  EXPECT_FALSE(client.RankAlive(0));
}

TEST(MpEngineClientTest, ASnapshotOlderThanASendDoesNotDropItFromTheLoad) {
  // Rank 2 turns ready only in the stale snapshot, which makes its arrival observable; it
  // holds so much that it is never picked.
  FakeDp dp("stale", 3);
  MpEngineClient client(dp.options);
  ASSERT_TRUE(client.Start().ok());
  for (int i = 0; i < 200 && !client.RankAlive(1); ++i) {  // SUB joins late: publish until seen
    dp.Publish({dp.Load(0, 0, 0), dp.Load(1, 0, 0)});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(client.RankAlive(0) && client.RankAlive(1));
  auto ignore = [](const EngineOutput&) {};
  ASSERT_TRUE(client.AddRequest(Request("long", 100), ignore).ok());  // 103 tokens
  EXPECT_EQ(dp.Arrived(), 0);
  ASSERT_TRUE(client.AddRequest(Request("short", 1), ignore).ok());  // 4 tokens
  EXPECT_EQ(dp.Arrived(), 1);
  // Taken after rank 1 received "short" but before rank 0 received "long".
  dp.Publish({dp.Load(0, 0, 0), dp.Load(1, 4, 1), dp.Load(2, 1'000'000, 0)});
  for (int i = 0; i < 200 && !client.RankAlive(2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(client.RankAlive(2));
  // Rank 0 still holds "long" (103) against rank 1's 4: the next one goes to rank 1. Forgetting
  // every send at each snapshot (vLLM's reset) would see rank 0 empty and pick it.
  ASSERT_TRUE(client.AddRequest(Request("next", 1), ignore).ok());
  EXPECT_EQ(dp.Arrived(), 1);
  client.Shutdown();
}

}  // namespace
}  // namespace tandem::router
