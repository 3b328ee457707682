// LoadBalancer: least-loaded with rotating ties, round-robin, unavailable ranks skipped.
#include "router/load_balancer.h"

#include <gtest/gtest.h>

namespace tandem::router {
namespace {

TEST(LoadBalancerTest, BurstOnTwoIdleRanksSplitsEvenlyBeforeAnySnapshot) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded);
  std::vector<RankView> ranks(2, RankView{true, 0, 0, 0});
  int per_rank[2] = {0, 0};
  for (int i = 0; i < 32; ++i) {
    const int32_t r = lb.Pick(ranks);
    ASSERT_GE(r, 0);
    ++per_rank[r];
    ++ranks[r].sent_since_snapshot;  // what the client does after each send
  }
  EXPECT_EQ(per_rank[0], 16);
  EXPECT_EQ(per_rank[1], 16);
}

TEST(LoadBalancerTest, PicksTheRankWithTheLowestScore) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded);
  // score = 4 * (waiting + sent) + running: 4*1+0=4 vs 4*0+3=3 → rank 1.
  std::vector<RankView> ranks = {{true, 1, 0, 0}, {true, 0, 3, 0}};
  EXPECT_EQ(lb.Pick(ranks), 1);
  ranks[1].sent_since_snapshot = 1;  // now 4 vs 7 → rank 0
  EXPECT_EQ(lb.Pick(ranks), 0);
}

TEST(LoadBalancerTest, SkipsUnavailableRanksAndReportsNoneWhenAllAreDown) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded);
  std::vector<RankView> ranks = {{false, 0, 0, 0}, {true, 9, 9, 9}};
  EXPECT_EQ(lb.Pick(ranks), 1);
  ranks[1].available = false;
  EXPECT_EQ(lb.Pick(ranks), -1);
}

TEST(LoadBalancerTest, RoundRobinIgnoresLoad) {
  LoadBalancer lb(LoadBalancePolicy::kRoundRobin);
  std::vector<RankView> ranks = {{true, 100, 100, 0}, {true, 0, 0, 0}, {true, 0, 0, 0}};
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
