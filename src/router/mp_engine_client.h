// MpEngineClient: an API server's EngineClient for engine cores in other processes (and on
// other machines), over ZeroMQ: requests are PUSHed to the chosen rank's request socket;
// outputs and heartbeats of every rank arrive on this API server's own PULL socket.
// With one rank and no coordinator, rank 0's request endpoint is fixed and its kReady frame
// makes it ready. With data parallel, ranks, their endpoints, liveness and load come from the
// coordinator's snapshots (SUB), and the LoadBalancer picks a rank per request — among the
// ranks this API server serves: all of them, or, with hybrid / external DP load balancing, the
// ranks of its own machine (docs/design/dp-load-balancing-modes.md). Ranks it does not serve
// are never connected, chosen, awaited or watched.
// Reference: vLLM V1 AsyncMPClient / DPLBAsyncMPClient (core_client.py).
#pragma once

#include <atomic>
#include <functional>
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
#include "router/rank_load_tracker.h"

namespace tandem::router {

// VLLM_ENGINE_ITERATION_TIMEOUT_S (seconds, > 0), else 60.
double EngineIterationTimeoutS();

struct MpEngineClientOptions {
  std::string output_endpoint;    // our PULL for outputs (we bind)
  std::string input_endpoint;     // one rank, no coordinator: rank 0's request PULL
  std::string snapshot_endpoint;  // data parallel: the coordinator's PUB (we connect)
  int32_t dp_size = 1;
  int32_t client_index = 0;       // which API server we are (engines route outputs by it)
  int32_t num_api_servers = 1;    // how many share the ranks (the load balancer's K)
  int32_t first_served_rank = 0;  // the ranks this API server sends requests to:
  int32_t num_served_ranks = -1;  // first_served_rank … + num_served_ranks - 1; -1 = all
  LoadBalancePolicy policy = LoadBalancePolicy::kLeastLoaded;
  double heartbeat_timeout_s = 3.0;  // a ready rank silent this long is dead
  // A rank with requests in flight whose engine built no output for this long is stalled (its
  // heartbeat thread may live on while its step hangs: a stopped TP worker): it counts as not
  // serving for IsReady (/health 503) until it steps again. vLLM's
  // VLLM_ENGINE_ITERATION_TIMEOUT_S (EngineIterationTimeoutS() reads it); <= 0: never.
  double iteration_timeout_s = EngineIterationTimeoutS();
  bool shutdown_engines = true;  // Shutdown() also tells the engines to exit
  // Called once, on the thread that found it, when the last live rank is lost after every
  // rank's in-flight requests were failed (the API server then exits, as vLLM's does, so that
  // a supervisor restarts it). Must not block.
  std::function<void(const std::string& reason)> on_all_ranks_lost;
};

class MpEngineClient : public EngineClient {
 public:
  explicit MpEngineClient(MpEngineClientOptions options);
  ~MpEngineClient() override;

  // Binds the output pipe, connects the request / snapshot pipes, starts the receive thread.
  // Errors: kUnavailable naming the endpoint.
  Status Start();

  Status AddRequest(protocol::EngineRequest request, OutputCallback on_output,
                    int32_t* dp_rank = nullptr) override;
  void AbortRequest(const std::string& request_id) override;
  bool IsReady() const override;
  std::string NotReadyReason() const override;
  protocol::EngineStats LatestStats(int dp_rank = 0) const override;
  int num_ranks() const override { return options_.dp_size; }
  bool ServesRank(int dp_rank) const override;
  bool RankAlive(int dp_rank) const override;

  // Blocks until a rank is ready (true) or `timeout_s` passed / all died (false).
  bool WaitReady(double timeout_s) const;
  // Marks `dp_rank` (-1: every rank) dead: its in-flight requests end with kError.
  void MarkEngineDead(const std::string& reason, int dp_rank = -1);
  // Stops the receive thread (and, if configured, asks the engines to exit).
  void Shutdown();

 private:
  struct Rank {
    std::unique_ptr<ipc::ZmqSocket> input;  // guarded by send_mu_
    std::string endpoint;
    bool ready = false;
    bool dead = false;
    double last_heard_s = 0;
    double last_progress_s = 0;  // when its stats last advanced, or work arrived at an idle rank
    bool stalled = false;        // in-flight work and no progress for iteration_timeout_s
    RankLoadTracker load;        // held tokens per the snapshots + our sends they do not count
    protocol::EngineStats stats;
    std::unordered_set<std::string> in_flight;
  };

  bool all_lost_reported_ = false;  // on_all_ranks_lost ran (guarded by mu_)

  void ReceiveLoop();
  void HandleOutputs(const std::string& frame);
  void HandleSnapshot(const std::string& frame);
  void CheckHeartbeats();
  // Ends every in-flight request of `rank` with kError — and, when the ranks step together
  // (EngineStats::lockstep, expert parallel), every other rank's too. Caller must NOT hold mu_.
  void FailRank(int32_t rank, const std::string& reason);
  // Connects the request pipe of `rank`; `mark_ready`: the rank serves from now on (a rank the
  // coordinator reported ready — not before its pipe exists).
  Status ConnectRank(int32_t rank, const std::string& endpoint, bool mark_ready);
  Result<int32_t> ChooseRank(int32_t pinned);

  MpEngineClientOptions options_;
  ipc::ZmqSocket output_;
  ipc::ZmqSocket snapshots_;
  std::mutex send_mu_;     // guards every Rank::input (zmq: one thread a time)
  mutable std::mutex mu_;  // guards everything below
  std::vector<Rank> ranks_;
  mutable bool started_up_ = false;  // every rank has been ready once (guarded by mu_)
  std::unordered_map<std::string, OutputCallback> callbacks_;
  std::unordered_map<std::string, int32_t> rank_of_request_;
  LoadBalancer balancer_;
  std::atomic<bool> stop_{false};
  std::thread receiver_;
};

}  // namespace tandem::router
