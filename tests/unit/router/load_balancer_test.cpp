// LoadBalancer: least-loaded by tokens then requests, rotating ties, round-robin, unavailable
// ranks skipped.
#include "router/load_balancer.h"

#include <gtest/gtest.h>

namespace tandem::router {
namespace {

TEST(LoadBalancerTest, BurstOnTwoIdleRanksSplitsEvenlyBeforeAnySnapshot) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded);
  std::vector<RankView> ranks(2, RankView{true});
  int per_rank[2] = {0, 0};
  for (int i = 0; i < 32; ++i) {
    const int32_t r = lb.Pick(ranks);
    ASSERT_GE(r, 0);
    ++per_rank[r];
    ++ranks[r].unreported;  // what the client does after each send
    ranks[r].unreported_tokens += 5 + 4;
  }
  EXPECT_EQ(per_rank[0], 16);
  EXPECT_EQ(per_rank[1], 16);
}

TEST(LoadBalancerTest, FewerTokensToComputeWinsOverFewerRequests) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded);
  // Rank 0 runs one long request (600 tokens left), rank 1 three short ones (3 × 40).
  std::vector<RankView> ranks(2, RankView{true});
  ranks[0].num_running = 1;
  ranks[0].pending_tokens = 600;
  ranks[1].num_running = 3;
  ranks[1].pending_tokens = 120;
  EXPECT_EQ(lb.Pick(ranks), 1);
  // What this API server sent since counts too: 500 more tokens on rank 1 → rank 0.
  ranks[1].unreported = 1;
  ranks[1].unreported_tokens = 500;
  EXPECT_EQ(lb.Pick(ranks), 0);
}

TEST(LoadBalancerTest, EqualTokensFallBackToVllmsRequestScore) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded);
  // Same tokens; request score = 4 * (waiting + unreported) + running: 4 vs 3 → rank 1.
  std::vector<RankView> ranks = {{true, 1, 0, 100}, {true, 0, 3, 100}};
  EXPECT_EQ(lb.Pick(ranks), 1);
  ranks[1].unreported = 1;  // now 4 vs 7 → rank 0
  EXPECT_EQ(lb.Pick(ranks), 0);
}

TEST(LoadBalancerTest, SkipsUnavailableRanksAndReportsNoneWhenAllAreDown) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded);
  std::vector<RankView> ranks = {{false, 0, 0, 0}, {true, 9, 9, 9000}};
  EXPECT_EQ(lb.Pick(ranks), 1);
  ranks[1].available = false;
  EXPECT_EQ(lb.Pick(ranks), -1);
}

TEST(LoadBalancerTest, RoundRobinIgnoresLoad) {
  LoadBalancer lb(LoadBalancePolicy::kRoundRobin);
  std::vector<RankView> ranks = {{true, 100, 100, 9000}, {true, 0, 0, 0}, {true, 0, 0, 0}};
  EXPECT_EQ(lb.Pick(ranks), 0);
  EXPECT_EQ(lb.Pick(ranks), 1);
  EXPECT_EQ(lb.Pick(ranks), 2);
  EXPECT_EQ(lb.Pick(ranks), 0);
}

TEST(LoadBalancerTest, ParsesThePolicyFlagValues) {
  LoadBalancePolicy p;
  EXPECT_TRUE(ParseLoadBalancePolicy("least-loaded", &p));
  EXPECT_EQ(p, LoadBalancePolicy::kLeastLoaded);
  EXPECT_TRUE(ParseLoadBalancePolicy("round-robin", &p));
  EXPECT_EQ(p, LoadBalancePolicy::kRoundRobin);
  EXPECT_FALSE(ParseLoadBalancePolicy("random", &p));
}

}  // namespace
}  // namespace tandem::router
