// LoadBalancer: which DP rank gets the next request. Pure logic, no sockets; one per API server.
// least-loaded picks the lowest (token score, request score):
// - token score = the tokens the rank still has to compute for the requests it holds (prompt
//   not yet prefilled + max_tokens not yet generated, from the coordinator's latest snapshot)
//   + the same estimate for the requests this API server sent that the snapshot has not
//   counted yet. It sees that a rank holding long requests is busier than one holding as many
//   short ones, which request counts cannot (measured in docs/benchmarks.md).
// - request score (vLLM's, the tie-break) = 4 × (waiting + unreported) + running.
// "Not counted yet" is exact: engines report how many requests they received from each API
// server, so a stale snapshot does not drop what was sent after it. Ties rotate, so a burst
// on idle ranks splits evenly before any snapshot reflects it.
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
  bool available = false;          // ready, alive and reachable
  int32_t num_waiting = 0;         // from the latest snapshot
  int32_t num_running = 0;         // from the latest snapshot
  int64_t pending_tokens = 0;      // from the latest snapshot: tokens still to compute
  int32_t unreported = 0;          // sent by this API server, not yet counted by a snapshot
  int64_t unreported_tokens = 0;   // their prompt + max_tokens
};

class LoadBalancer {
 public:
  explicit LoadBalancer(LoadBalancePolicy policy) : policy_(policy) {}

  // The rank for the next request, or -1 when none is available. Not thread-safe.
  int32_t Pick(const std::vector<RankView>& ranks);

  static int64_t TokenScore(const RankView& r) { return r.pending_tokens + r.unreported_tokens; }
  static int64_t RequestScore(const RankView& r) {
    return 4 * static_cast<int64_t>(r.num_waiting + r.unreported) + r.num_running;
  }

 private:
  LoadBalancePolicy policy_;
  uint64_t next_ = 0;  // rotation start: ties and round-robin begin after the last pick
};

}  // namespace tandem::router
