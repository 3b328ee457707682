// CreateProcessGroup's argument checks, and that a missing peer gives kUnavailable within the
// group's timeout instead of a hang.
#include <gtest/gtest.h>

#include <chrono>

#include "comm/process_group.h"
#include "comm_testing.h"

namespace tandem::comm {
namespace {

GroupSpec MakeSpec(const std::string& backend, const std::string& name, int rank, int size,
                   double timeout_s = 60) {
  GroupSpec spec;
  spec.backend = backend;
  spec.name = name;
  spec.rank = rank;
  spec.size = size;
  spec.rendezvous = testing::FreeLoopbackAddress();
  spec.timeout_s = timeout_s;
  return spec;
}

TEST(CreateProcessGroupTest, UnknownBackendIsInvalidArgument) {
  GroupSpec spec = MakeSpec("carrier-pigeon", "g", 0, 1);
  auto pg = CreateProcessGroup(spec);
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(pg.status().message().find("carrier-pigeon"), std::string::npos);
}

TEST(CreateProcessGroupTest, RankOutsideGroupIsInvalidArgument) {
  GroupSpec spec = MakeSpec("local", "g", 2, 2);
  auto pg = CreateProcessGroup(spec);
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), StatusCode::kInvalidArgument);
}

TEST(CreateProcessGroupTest, SingleRankGroupIsIdentity) {
  for (const char* backend : {"local"}) {
    GroupSpec spec = MakeSpec(backend, testing::UniqueGroupName("one"), 0, 1);
    auto pg = CreateProcessGroup(spec);
    ASSERT_TRUE(pg.ok()) << backend << ": " << pg.status().ToString();
    EXPECT_EQ(testing::CheckAllReduceSum(**pg, 7), "") << backend;
    EXPECT_EQ(testing::CheckAllToAll(**pg, 7), "") << backend;
  }
}

class MissingPeerTest : public ::testing::TestWithParam<std::string> {};

// Rank 0 of a 2-rank group starts alone: joining must fail with kUnavailable naming the group,
// within about the timeout.
TEST_P(MissingPeerTest, JoinWithoutPeerIsUnavailableWithinTimeout) {
  GroupSpec spec = MakeSpec(GetParam(), testing::UniqueGroupName("lonely"), 0, 2, 1.0);
  auto start = std::chrono::steady_clock::now();
  auto pg = CreateProcessGroup(spec);
  double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), StatusCode::kUnavailable) << pg.status().ToString();
  EXPECT_NE(pg.status().message().find(spec.name), std::string::npos) << pg.status().ToString();
  EXPECT_LT(elapsed_s, 10.0);
}

// Both ranks join, then rank 1 exits without entering the all-reduce: rank 0 must get
// kUnavailable within the timeout.
TEST_P(MissingPeerTest, PeerThatStopsCallingGivesUnavailableInCollective) {
  GroupSpec spec = MakeSpec(GetParam(), testing::UniqueGroupName("quitter"), 0, 2, 2.0);
  std::string errors = testing::RunGroup(spec, 2, [](ProcessGroup& pg) -> std::string {
    if (pg.rank() == 1) return "";
    float x = 1;
    auto start = std::chrono::steady_clock::now();
    Status st = pg.AllReduceSum(&x, 1);
    double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (st.code() != StatusCode::kUnavailable) return "expected kUnavailable, got " + st.ToString();
    if (elapsed_s > 10) return "took " + std::to_string(elapsed_s) + " s";
    return "";
  }, 30);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Backends, MissingPeerTest, ::testing::Values("local"));

}  // namespace
}  // namespace tandem::comm
