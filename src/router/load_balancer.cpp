#include "router/load_balancer.h"

namespace tandem::router {

bool ParseLoadBalancePolicy(const std::string& name, LoadBalancePolicy* out) {
  if (name == "least-loaded") {
    *out = LoadBalancePolicy::kLeastLoaded;
  } else if (name == "round-robin") {
    *out = LoadBalancePolicy::kRoundRobin;
  } else {
    return false;
  }
  return true;
}

int32_t LoadBalancer::Pick(const std::vector<RankView>& ranks) {
  const size_t n = ranks.size();
  int32_t best = -1;
  int64_t best_score = 0;
  // Visit ranks starting after the previous pick: the first minimum found wins, so ties rotate.
  for (size_t i = 0; i < n; ++i) {
    const size_t r = (next_ + i) % n;
    if (!ranks[r].available) continue;
    if (policy_ == LoadBalancePolicy::kRoundRobin) {
      best = static_cast<int32_t>(r);
      break;
    }
    const int64_t score = TokenLoad(ranks[r]);
    if (best < 0 || score < best_score) {
      best = static_cast<int32_t>(r);
      best_score = score;
    }
  }
  if (best >= 0) next_ = static_cast<uint64_t>(best) + 1;
  return best;
}

}  // namespace tandem::router
