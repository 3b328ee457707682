// CreateProcessGroup's argument checks, and that a missing peer gives kUnavailable within the
// group's timeout instead of a hang.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

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
  for (const char* backend : {"local", "shm", "gloo"}) {
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
  double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.status().code(), StatusCode::kUnavailable) << pg.status().ToString();
  EXPECT_NE(pg.status().message().find(spec.name), std::string::npos) << pg.status().ToString();
  EXPECT_LT(elapsed_s, 10.0);
}

// Both ranks join, then rank 1 exits without entering the all-reduce: rank 0 must get
// kUnavailable within the timeout.
TEST_P(MissingPeerTest, PeerThatStopsCallingGivesUnavailableInCollective) {
  GroupSpec spec = MakeSpec(GetParam(), testing::UniqueGroupName("quitter"), 0, 2, 2.0);
  std::string errors = testing::RunGroup(
      spec, 2,
      [](ProcessGroup& pg) -> std::string {
        if (pg.rank() == 1) return "";
        float x = 1;
        auto start = std::chrono::steady_clock::now();
        Status st = pg.AllReduceSum(&x, 1);
        double elapsed_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (st.code() != StatusCode::kUnavailable)
          return "expected kUnavailable, got " + st.ToString();
        if (elapsed_s > 10) return "took " + std::to_string(elapsed_s) + " s";
        return "";
      },
      30);
  EXPECT_EQ(errors, "");
}

class CrashedPeerTest : public ::testing::TestWithParam<std::string> {};

// Rank 1 vanishes without any cleanup (as after kill -9): rank 0's all-reduce must give
// kUnavailable naming the group after the timeout, not hang.
TEST_P(CrashedPeerTest, PeerThatVanishesWithoutCleanupGivesUnavailableAfterTimeout) {
  GroupSpec spec = MakeSpec(GetParam(), testing::UniqueGroupName("crash"), 0, 2, 1.5);
  std::string errors = testing::RunGroup(
      spec, 2,
      [&](ProcessGroup& pg) -> std::string {
        if (pg.rank() == 1) _exit(0);  // no destructor runs
        float x = 1;
        auto start = std::chrono::steady_clock::now();
        Status st = pg.AllReduceSum(&x, 1);
        double elapsed_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (st.code() != StatusCode::kUnavailable)
          return "expected kUnavailable, got " + st.ToString();
        if (st.message().find(spec.name) == std::string::npos)
          return "message lacks the group name: " + st.message();
        if (elapsed_s > 10) return "took " + std::to_string(elapsed_s) + " s";
        // The group stays failed: a later call fails fast too.
        if (pg.Barrier().code() != StatusCode::kUnavailable) return "barrier after failure passed";
        return "";
      },
      30);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Backends, CrashedPeerTest, ::testing::Values("shm", "gloo"),
                         [](const auto& info) { return info.param; });

// A segment left under the group's name by a crashed run (valid-looking header) must not stop
// the next run with the same name from forming its group.
TEST(ShmSegmentTest, StaleSegmentFromCrashedRunDoesNotBlockNextRun) {
  std::string name = testing::UniqueGroupName("stale");
  std::string shm_name = "/tandem-" + name;
  int fd = shm_open(shm_name.c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 64 << 10), 0);
  void* p = mmap(nullptr, 64 << 10, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 0x5a, 64 << 10);  // garbage, including the magic and the tokens
  munmap(p, 64 << 10);
  close(fd);
  GroupSpec spec = MakeSpec("shm", name, 0, 2, 20);
  EXPECT_EQ(testing::RunGroup(spec, 2,
                              [](ProcessGroup& pg) { return testing::CheckAllReduceSum(pg, 7); }),
            "");
  // Rank 0 removed the name at the end.
  EXPECT_LT(shm_open(shm_name.c_str(), O_RDWR, 0600), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, MissingPeerTest, ::testing::Values("local", "shm", "gloo"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tandem::comm
