// Every collective × every backend × groups of 2 and 4, at counts 1, 7, 4096 and 2^20, against a
// naive reference (comm_testing.cpp). local runs ranks as threads; shm and gloo as forked
// processes, each failing the test by exit code and message, and a hang fails it by deadline.
#include <gtest/gtest.h>

#include <tuple>

#include "comm_testing.h"

namespace tandem::comm {
namespace {

using testing::kCounts;

class CollectivesTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  // Runs `check(pg, count)` for every count of kCounts inside one group.
  void RunAllCounts(const std::function<std::string(ProcessGroup&, size_t)>& check) {
    auto [backend, size] = GetParam();
    GroupSpec spec;
    spec.backend = backend;
    spec.name = testing::UniqueGroupName("ct-" + backend);
    spec.timeout_s = 60;
    if (backend == "gloo") spec.rendezvous = testing::FreeLoopbackAddress();
    std::string errors = testing::RunGroup(spec, size, [&](ProcessGroup& pg) -> std::string {
      if (pg.size() != size || pg.backend() != backend) return "wrong size or backend";
      for (size_t count : kCounts) {
        std::string err = check(pg, count);
        if (!err.empty()) return err;
      }
      return "";
    });
    EXPECT_EQ(errors, "");
  }
};

TEST_P(CollectivesTest, AllReduceSumMatchesReference) { RunAllCounts(testing::CheckAllReduceSum); }
TEST_P(CollectivesTest, AllReduceSumBf16MatchesReferenceWithinOneRounding) {
  RunAllCounts(testing::CheckAllReduceSumBf16);
}
TEST_P(CollectivesTest, AllGatherMatchesReference) { RunAllCounts(testing::CheckAllGather); }
TEST_P(CollectivesTest, ReduceScatterSumMatchesReference) {
  RunAllCounts(testing::CheckReduceScatterSum);
}
TEST_P(CollectivesTest, AllToAllWithUnevenCountsMatchesReference) {
  RunAllCounts(testing::CheckAllToAll);
}
TEST_P(CollectivesTest, BroadcastFromEveryRootMatchesReference) {
  RunAllCounts(testing::CheckBroadcast);
}
TEST_P(CollectivesTest, RepeatedBarriersPass) {
  RunAllCounts([](ProcessGroup& pg, size_t) { return testing::CheckBarrier(pg); });
}
// Collectives of different kinds back to back in one group (buffers reused across calls).
TEST_P(CollectivesTest, MixedSequenceOfSmallCollectivesMatchesReference) {
  RunAllCounts([](ProcessGroup& pg, size_t count) -> std::string {
    if (count > 4096) return "";
    for (int k = 0; k < 20; ++k) {
      for (auto* f : {testing::CheckAllReduceSum, testing::CheckAllGather,
                      testing::CheckReduceScatterSum, testing::CheckAllReduceSumBf16}) {
        std::string err = f(pg, count);
        if (!err.empty()) return err;
      }
    }
    return "";
  });
}

// 3·2^20 + 5 elements: several shm chunks (4 MiB halves) with a ragged tail.
TEST_P(CollectivesTest, MessagesSpanningSeveralChunksMatchReference) {
  RunAllCounts([](ProcessGroup& pg, size_t count) -> std::string {
    if (count != kCounts.back()) return "";
    size_t big = 3 * count + 5;
    for (auto* f : {testing::CheckAllReduceSum, testing::CheckAllReduceSumBf16,
                    testing::CheckAllGather, testing::CheckBroadcast}) {
      std::string err = f(pg, big);
      if (!err.empty()) return err;
    }
    return "";
  });
}

std::string ParamName(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
}

INSTANTIATE_TEST_SUITE_P(Backends, CollectivesTest,
                         ::testing::Combine(::testing::Values("local", "shm", "gloo"),
                                            ::testing::Values(2, 4)),
                         ParamName);

}  // namespace
}  // namespace tandem::comm
