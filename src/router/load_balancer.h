// LoadBalancer: which DP rank gets the next request. Pure logic, no sockets; one per API server.
// Score (lower is better) = 4 × (waiting + sent since the last snapshot) + running, from the
// coordinator's latest snapshot plus this API server's own count of what it sent since — the
// requests it sent are queued somewhere the snapshot cannot see yet. Ties rotate, so a burst
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
  int32_t sent_since_snapshot = 0; // this API server's own count
};

class LoadBalancer {
 public:
  explicit LoadBalancer(LoadBalancePolicy policy) : policy_(policy) {}

  // The rank for the next request, or -1 when none is available. Not thread-safe.
  int32_t Pick(const std::vector<RankView>& ranks);

  static int64_t Score(const RankView& r) {
    return 4 * static_cast<int64_t>(r.num_waiting + r.sent_since_snapshot) + r.num_running;
  }

 private:
  LoadBalancePolicy policy_;
  uint64_t next_ = 0;  // rotation start: ties and round-robin begin after the last pick
};

}  // namespace tandem::router
