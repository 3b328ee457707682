#include "worker/kv_budget.h"

#include <gtest/gtest.h>

namespace tandem::worker {
namespace {

// 2 layers × K,V × 16 tokens × 2 heads × 2 dims × 4 bytes = 1024 bytes per block.
const model::CacheGroups kSpec = {model::PagedKvGroup({0, 1}, /*num_kv_heads=*/2, /*head_dim=*/2)};
constexpr size_t kMiB = size_t{1} << 20;

TEST(KvBudgetTest, ExplicitKvCacheBytesGiveExactlyThatManyWholeBlocks) {
  ASSERT_EQ(model::BytesPerBlock(kSpec, 16), 1024u);
  EXPECT_EQ(NumKvBlocksForBudget(kSpec, 16, 0, 0.9, 10 * 1024 + 5, 0), 10);
  EXPECT_EQ(ComputeNumKvBlocks(kSpec, 16, 0, 0.9, 3 * 1024), 3);
}

TEST(KvBudgetTest, UtilizationShareMinusWeightsMinusActivationReserve) {
  // 0.5 × 1024 MiB − 100 MiB weights − 128 MiB reserve = 284 MiB = 284 × 1024 blocks.
  EXPECT_EQ(NumKvBlocksForBudget(kSpec, 16, 100 * kMiB, 0.5, std::nullopt, 1024 * kMiB),
            284 * 1024);
}

TEST(KvBudgetTest, BudgetBelowWeightsGivesZeroBlocks) {
  EXPECT_EQ(NumKvBlocksForBudget(kSpec, 16, 900 * kMiB, 0.5, std::nullopt, 1024 * kMiB), 0);
}

TEST(KvBudgetTest, AnAddressSpaceLimitCutsTheUtilizationBudgetToItsRoom) {
  // 284 MiB by the share (above), but only 200 MiB left to map: 200 − 128 reserve = 72 MiB.
  EXPECT_EQ(NumKvBlocksForBudget(kSpec, 16, 100 * kMiB, 0.5, std::nullopt, 1024 * kMiB, 200 * kMiB),
            72 * 1024);
  // More room than the share: the share stands. No room past the reserve: no blocks.
  EXPECT_EQ(
      NumKvBlocksForBudget(kSpec, 16, 100 * kMiB, 0.5, std::nullopt, 1024 * kMiB, 4096 * kMiB),
      284 * 1024);
  EXPECT_EQ(NumKvBlocksForBudget(kSpec, 16, 100 * kMiB, 0.5, std::nullopt, 1024 * kMiB, kMiB), 0);
  // An explicit size is what was asked for (the app refuses one past the room).
  EXPECT_EQ(NumKvBlocksForBudget(kSpec, 16, 0, 0.9, 10 * 1024, 0, kMiB), 10);
}

TEST(KvBudgetTest, UsableMemoryIsReadFromThisMachine) { EXPECT_GT(ReadUsableMemoryBytes(), 0u); }

}  // namespace
}  // namespace tandem::worker
