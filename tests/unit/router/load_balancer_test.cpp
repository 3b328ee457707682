// LoadBalancer: least-loaded by held tokens with rotating ties (and K × our unreported sends),
// round-robin, unavailable ranks skipped.
#include "router/load_balancer.h"

#include <gtest/gtest.h>

namespace tandem::router {
namespace {

constexpr int64_t kShort = 2 + 4;  // a request's weight: prompt tokens + max_tokens

// What MpEngineClient does after each send: the request joins the rank's unreported tokens.
int32_t Send(LoadBalancer& lb, std::vector<RankView>& ranks, int64_t tokens) {
  const int32_t r = lb.Pick(ranks);
  if (r >= 0) ranks[r].unreported_tokens += tokens;
  return r;
}

TEST(LoadBalancerTest, BurstOnTwoIdleRanksSplitsEvenlyBeforeAnySnapshot) {
  for (int32_t k : {1, 2, 4}) {
    LoadBalancer lb(LoadBalancePolicy::kLeastLoaded, k);
    std::vector<RankView> ranks(2, RankView{true, 0, 0});
    int per_rank[2] = {0, 0};
    for (int i = 0; i < 32; ++i) ++per_rank[Send(lb, ranks, kShort)];
    EXPECT_EQ(per_rank[0], 16) << "K=" << k;
    EXPECT_EQ(per_rank[1], 16) << "K=" << k;
  }
}

TEST(LoadBalancerTest, TwoApiServersWithOddShareStillSplitABurstWithinOne) {
  // SO_REUSEPORT hands the 32 connections to the two API servers unevenly (17 / 15 here).
  // Each starts its rotation at its own index, so their odd extras land on different ranks.
  LoadBalancer a(LoadBalancePolicy::kLeastLoaded, 2, /*client_index=*/0);
  LoadBalancer b(LoadBalancePolicy::kLeastLoaded, 2, /*client_index=*/1);
  std::vector<RankView> view_a(2, RankView{true, 0, 0}), view_b = view_a;
  int per_rank[2] = {0, 0};
  for (int i = 0; i < 17; ++i) ++per_rank[Send(a, view_a, kShort)];
  for (int i = 0; i < 15; ++i) ++per_rank[Send(b, view_b, kShort)];
  EXPECT_EQ(per_rank[0], 16);
  EXPECT_EQ(per_rank[1], 16);
}

TEST(LoadBalancerTest, ARankHoldingLongRequestsIsBusierThanOneHoldingAsManyShortOnes) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded, 1);
  // One 32 + 640 token request against one 32 + 64: vLLM's request count (1 running each)
  // ties here and would alternate; the token load sends the next requests to rank 1.
  std::vector<RankView> ranks = {{true, 32 + 640, 0}, {true, 32 + 64, 0}};
  // Rank 1 takes the next 6 short ones (96 + 6 × 96 = 672 = rank 0's load) ...
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Send(lb, ranks, 96), 1) << "send " << i;
  EXPECT_EQ(ranks[1].held_tokens + ranks[1].unreported_tokens, 672);
  // ... then the tie rotates to rank 0, after which rank 0 holds more again.
  EXPECT_EQ(Send(lb, ranks, 96), 0);
  EXPECT_EQ(Send(lb, ranks, 96), 1);
}

TEST(LoadBalancerTest, KApiServersCloseASnapshotsGapOnceNotKTimes) {
  // A snapshot shows rank 0 holding 4 short requests and rank 1 none. Both API servers read
  // it, and each then sends 4 more. Balanced is 6 / 6 of the 12, i.e. 6 of the 8 new ones to
  // rank 1. Counting their own sends twice (K = 2), each assumes the other sends as many and
  // they close the gap once; counting them once, each closes the whole gap by itself and all
  // 8 go to rank 1 (4 / 8).
  for (int32_t k : {1, 2}) {
    LoadBalancer a(LoadBalancePolicy::kLeastLoaded, k, 0);
    LoadBalancer b(LoadBalancePolicy::kLeastLoaded, k, 1);
    std::vector<RankView> view_a = {{true, 4 * kShort, 0}, {true, 0, 0}}, view_b = view_a;
    int to_rank1 = 0;
    for (int i = 0; i < 4; ++i) to_rank1 += Send(a, view_a, kShort);
    for (int i = 0; i < 4; ++i) to_rank1 += Send(b, view_b, kShort);
    if (k == 2) {
      EXPECT_EQ(to_rank1, 6) << "K=2 ends balanced: 6 / 6";
    } else {
      EXPECT_EQ(to_rank1, 8) << "K=1 herds: every send to rank 1, 4 / 8";
    }
  }
}

TEST(LoadBalancerTest, SkipsUnavailableRanksAndReportsNoneWhenAllAreDown) {
  LoadBalancer lb(LoadBalancePolicy::kLeastLoaded, 1);
  std::vector<RankView> ranks = {{false, 0, 0}, {true, 900, 90}};
  EXPECT_EQ(lb.Pick(ranks), 1);
  ranks[1].available = false;
  EXPECT_EQ(lb.Pick(ranks), -1);
}

TEST(LoadBalancerTest, RoundRobinIgnoresLoad) {
  LoadBalancer lb(LoadBalancePolicy::kRoundRobin, 1);
  std::vector<RankView> ranks = {{true, 10000, 0}, {true, 0, 0}, {true, 0, 0}};
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
