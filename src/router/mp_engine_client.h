// MpEngineClient: an API server's EngineClient for engine cores in other processes (and on
// other machines), over ZeroMQ: requests are PUSHed to the chosen rank's request socket;
// outputs and heartbeats of every rank arrive on this API server's own PULL socket.
// With one rank and no coordinator, rank 0's request endpoint is fixed and its kReady frame
// makes it ready. With data parallel, ranks, their endpoints, liveness and load come from the
// coordinator's snapshots (SUB), and the LoadBalancer picks a rank per request.
// Reference: vLLM V1 AsyncMPClient / DPLBAsyncMPClient (core_client.py).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ipc/zmq_socket.h"
#include "protocol/dp_messages.h"
#include "router/engine_client.h"
#include "router/load_balancer.h"

namespace tandem::router {

struct MpEngineClientOptions {
  std::string output_endpoint;    // our PULL for outputs (we bind)
  std::string input_endpoint;     // one rank, no coordinator: rank 0's request PULL
  std::string snapshot_endpoint;  // data parallel: the coordinator's PUB (we connect)
  int32_t dp_size = 1;
  int32_t client_index = 0;       // which API server we are (engines route outputs by it)
  int32_t num_api_servers = 1;    // how many share the ranks (the load balancer's K)
  LoadBalancePolicy policy = LoadBalancePolicy::kLeastLoaded;
  double heartbeat_timeout_s = 3.0;  // a ready rank silent this long is dead
  bool shutdown_engines = true;      // Shutdown() also tells the engines to exit
};

class MpEngineClient : public EngineClient {
 public:
  explicit MpEngineClient(MpEngineClientOptions options);
  ~MpEngineClient() override;

  // Binds the output pipe, connects the request / snapshot pipes, starts the receive thread.
  // Errors: kUnavailable naming the endpoint.
  Status Start();

  Status AddRequest(protocol::EngineRequest request, OutputCallback on_output) override;
  void AbortRequest(const std::string& request_id) override;
  bool IsReady() const override;
  std::string NotReadyReason() const override;
  protocol::EngineStats LatestStats(int dp_rank = 0) const override;
  int num_ranks() const override { return options_.dp_size; }
  bool RankAlive(int dp_rank) const override;

  // Blocks until a rank is ready (true) or `timeout_s` passed / all died (false).
  bool WaitReady(double timeout_s) const;
  // Marks `dp_rank` (-1: every rank) dead: its in-flight requests end with kError.
  void MarkEngineDead(const std::string& reason, int dp_rank = -1);
  // Stops the receive thread (and, if configured, asks the engines to exit).
  void Shutdown();

 private:
  struct Rank {
    std::unique_ptr<ipc::ZmqSocket> input;    // guarded by send_mu_
    std::string endpoint;
    bool ready = false;
    bool dead = false;
    double last_heard_s = 0;
    // Load from the latest snapshot (RankView::held_tokens), and how many of our requests
    // the rank had received then.
    int64_t held_tokens = 0;
    int64_t num_received = 0;
    // Requests we sent to this rank: how many in all, and (sequence number, prompt +
    // max_tokens) of those no snapshot has counted yet.
    int64_t num_sent = 0;
    std::deque<std::pair<int64_t, int64_t>> unreported;
    protocol::EngineStats stats;
    std::unordered_set<std::string> in_flight;
  };

  void ReceiveLoop();
  void HandleOutputs(const std::string& frame);
  void HandleSnapshot(const std::string& frame);
  void CheckHeartbeats();
  // Takes a snapshot's load for `r` unless it is an older picture than `r` has (fewer of our
  // requests received), and forgets the unreported requests it counts. Caller holds mu_.
  void ApplyLoad(Rank& r, const protocol::RankLoad& load);
  // Ends every in-flight request of `rank` with kError — and, when the ranks step together
  // (EngineStats::lockstep, expert parallel), every other rank's too. Caller must NOT hold mu_.
  void FailRank(int32_t rank, const std::string& reason);
  Status ConnectRank(int32_t rank, const std::string& endpoint);
  Result<int32_t> ChooseRank(int32_t pinned);

  MpEngineClientOptions options_;
  ipc::ZmqSocket output_;
  ipc::ZmqSocket snapshots_;
  std::mutex send_mu_;                      // guards every Rank::input (zmq: one thread a time)
  mutable std::mutex mu_;                   // guards everything below
  std::vector<Rank> ranks_;
  mutable bool started_up_ = false;  // every rank has been ready once (guarded by mu_)
  std::unordered_map<std::string, OutputCallback> callbacks_;
  std::unordered_map<std::string, int32_t> rank_of_request_;
  LoadBalancer balancer_;
  std::atomic<bool> stop_{false};
  std::thread receiver_;
};

}  // namespace tandem::router
