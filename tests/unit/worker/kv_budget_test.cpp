#include "worker/kv_budget.h"

#include <gtest/gtest.h>

namespace tandem::worker {
namespace {

// 2 layers × K,V × 16 tokens × 2 heads × 2 dims × 4 bytes = 1024 bytes per block.
const model::KvCacheSpec kSpec = {/*num_layers=*/2, /*num_kv_heads=*/2, /*head_dim=*/2};
constexpr size_t kMiB = size_t{1} << 20;

TEST(KvBudgetTest, ExplicitKvCacheBytesGiveExactlyThatManyWholeBlocks) {
  ASSERT_EQ(kSpec.BytesPerBlock(16), 1024u);
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

TEST(KvBudgetTest, UsableMemoryIsReadFromThisMachine) { EXPECT_GT(ReadUsableMemoryBytes(), 0u); }

}  // namespace
}  // namespace tandem::worker
