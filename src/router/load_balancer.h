// LoadBalancer: which DP rank gets the next request. Pure logic, no sockets; one per API server.
//
// least-loaded picks the rank with the lowest token load; ties rotate.
// token load = the tokens of work the rank holds: Σ (prompt tokens + max_tokens) over its
// waiting and running requests, from the coordinator's latest snapshot, plus K × the same for
// the requests this API server sent that the snapshot does not count yet (K = the number of
// API servers). A rank holding long requests is busier than one holding as many short ones,
// which vLLM's request count (4 × waiting + running) cannot see (docs/benchmarks.md, "Skewed
// workload").
// - Each request weighs its whole size until it finishes, not what remains of it: the load
//   changes only when a request arrives or ends, never with a rank's progress, so ranks holding
//   the same requests tie exactly, and a burst of equal requests on idle ranks splits evenly.
// - "Not counted yet" is exact: engines report how many requests they received from each API
//   server, so a snapshot taken before a send arrived does not drop it (RankLoadTracker).
// - K: the other API servers read the same snapshot and cannot see our sends, nor we theirs.
//   Counting ours K times assumes each of them sent as many, so that when a snapshot shows one
//   rank ahead, the K servers together send the gap to the other rank about once, not K times
//   over (vLLM adds its client count to the local waiting count for the same reason).
// Reference: vLLM v1 engine/core_client.py DPLBAsyncMPClient.get_core_engine_for_request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::router {

enum class LoadBalancePolicy { kLeastLoaded, kRoundRobin };

// Parses "least-loaded" / "round-robin"; false on anything else.
bool ParseLoadBalancePolicy(const std::string& name, LoadBalancePolicy* out);

struct RankView {
  bool available = false;         // ready, alive and reachable
  int64_t held_tokens = 0;        // latest snapshot: Σ prompt + max_tokens, unfinished requests
  int64_t unreported_tokens = 0;  // Σ prompt + max_tokens of what this API server sent that
                                  // the snapshot does not count yet
};

class LoadBalancer {
 public:
  // `num_api_servers` ≥ 1: the K above. `client_index`: which API server this is; rotation
  // starts at that rank, so that K servers' first picks spread over the ranks.
  LoadBalancer(LoadBalancePolicy policy, int32_t num_api_servers, int32_t client_index = 0)
      : policy_(policy),
        k_(num_api_servers < 1 ? 1 : num_api_servers),
        next_(client_index < 0 ? 0 : static_cast<uint64_t>(client_index)) {}

  // The rank for the next request, or -1 when none is available. Not thread-safe.
  int32_t Pick(const std::vector<RankView>& ranks);

  // The score least-loaded minimises (see above).
  int64_t TokenLoad(const RankView& r) const { return r.held_tokens + k_ * r.unreported_tokens; }

 private:
  LoadBalancePolicy policy_;
  int64_t k_;
  uint64_t next_;  // rotation start: ties and round-robin begin after the last pick
};

}  // namespace tandem::router
