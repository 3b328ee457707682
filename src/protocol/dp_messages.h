// Messages of the data-parallel control plane: the start-up handshake between each engine
// core and the head (ROUTER at --data-parallel-address:--data-parallel-rpc-port), and the
// load snapshots the coordinator publishes to every API server.
// Reference: vLLM v1 engine/utils.py (startup handshake), v1/engine/coordinator.py.
#pragma once

#include <msgpack.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tandem::protocol {

// Engine → head, first message: who I am and how I was configured.
struct EngineHello {
  int32_t dp_rank = 0;
  std::string host;  // this machine's address (GLOO_SOCKET_IFNAME / TANDEM_HOST_IP)
  int32_t pid = 0;
  std::string input_endpoint;  // where this engine's request PULL socket is bound
  // Settings that must agree on every machine, as (flag, value) pairs, e.g.
  // ("--seed", "1024"). The head names the first that differs from its own.
  std::vector<std::pair<std::string, std::string>> settings;
  MSGPACK_DEFINE(dp_rank, host, pid, input_endpoint, settings)
};

// API machine → head (hybrid / external DP load balancing, docs/design/dp-load-balancing-
// modes.md): a machine whose own API servers serve its ranks first_rank … first_rank +
// num_ranks - 1 asks where the coordinator publishes. The reply is a HandshakeReply.
struct ApiServerHello {
  std::string host;
  int32_t pid = 0;
  int32_t first_rank = 0;
  int32_t num_ranks = 0;
  std::vector<std::pair<std::string, std::string>> settings;  // as EngineHello's
  MSGPACK_DEFINE(host, pid, first_rank, num_ranks, settings)
};

// Head → engine (or API machine): accepted (with where to send outputs and stats) or refused (with
// why).
struct HandshakeReply {
  bool accepted = false;
  std::string error;                          // set when refused
  std::vector<std::string> output_endpoints;  // one PULL per API server, by client index
  std::string stats_endpoint;                 // the coordinator's stats PULL
  // The coordinator's PUB (load snapshots, StartWave): engines in DP waves subscribe.
  std::string publish_endpoint;
  // Expert parallel over DP ranks: the collectives backend of the groups that span DP ranks
  // ("shm" when every rank is on the head's machine, else "gloo"), a name unique to this
  // deployment, and the gloo rendezvous ("host:port", served by global rank 0) of the EP group
  // (all DP × TP ranks) and of the DP group of the engine cores (wave syncs).
  std::string group_backend;
  std::string group_name;
  std::string ep_rendezvous;
  std::string dp_rendezvous;
  MSGPACK_DEFINE(accepted, error, output_endpoints, stats_endpoint, publish_endpoint, group_backend,
                 group_name, ep_rendezvous, dp_rendezvous)
};

// Engine → coordinator → every engine: DP wave `wave` has started (a request reached an idle
// rank); every rank not yet in it joins with dummy steps. Reference: vLLM v1
// DPEngineCoreProc / DPCoordinator (start_wave, current_wave).
struct StartWave {
  int64_t wave = 0;
  int32_t dp_rank = 0;  // the rank that started it
  MSGPACK_DEFINE(wave, dp_rank)
};

// Engine → head once its model is loaded.
struct EngineReadyInfo {
  int32_t dp_rank = 0;
  int32_t num_gpu_blocks = 0;
  MSGPACK_DEFINE(dp_rank, num_gpu_blocks)
};

// One rank's state in a load snapshot.
struct RankLoad {
  int32_t dp_rank = 0;
  bool ready = false;          // handshake done, model loaded
  bool alive = false;          // ready and heard from within the heartbeat timeout
  std::string input_endpoint;  // where API servers PUSH its requests
  int32_t num_waiting = 0;
  int32_t num_running = 0;
  float kv_cache_usage = 0;
  int64_t num_held_tokens = 0;                  // EngineStats::num_held_tokens
  std::vector<int64_t> num_received_by_client;  // EngineStats::num_received_by_client
  int64_t num_requests_finished = 0;            // EngineStats::num_requests_finished
  MSGPACK_DEFINE(dp_rank, ready, alive, input_endpoint, num_waiting, num_running, kv_cache_usage,
                 num_held_tokens, num_received_by_client, num_requests_finished)
};

// Coordinator → API servers, at most every 100 ms while loads change, else every second.
struct LoadSnapshot {
  int64_t seq = 0;              // increases with every snapshot
  std::vector<RankLoad> ranks;  // one per DP rank, by rank
  MSGPACK_DEFINE(seq, ranks)
};

}  // namespace tandem::protocol
