#include "engine/kv_cache_manager.h"

#include <gtest/gtest.h>

#include "testing.h"

namespace tandem::engine {
namespace {

using testing::Iota;
using testing::MakeRequest;

constexpr int32_t kBlockSize = 4;

// Simulates one step that computes all scheduled tokens of `request`.
void ComputeStep(KvCacheManager& manager, Request& request, int32_t num_new_tokens) {
  request.num_computed_tokens += num_new_tokens;
  manager.CacheComputedBlocks(request);
}

TEST(BlockHashTest, ChainedHashesDependOnEveryEarlierToken) {
  std::vector<BlockHash> a, b;
  AppendFullBlockHashes(Iota(10), kBlockSize, &a);
  EXPECT_EQ(a.size(), 2u);  // the partial third block has no hash
  std::vector<int32_t> tokens = Iota(10);
  tokens[0] = 99;
  AppendFullBlockHashes(tokens, kBlockSize, &b);
  EXPECT_NE(a[0], b[0]);
  EXPECT_NE(a[1], b[1]);  // block 1's tokens are equal, its parent is not
  EXPECT_EQ(a[1], HashBlockTokens(a[0], std::vector<int32_t>{4, 5, 6, 7}));
}

TEST(KvCacheManagerTest, SharedPrefixHitsTheCachedFullBlocks) {
  KvCacheManager manager(16, kBlockSize, 64, true);
  Request a(MakeRequest("a", Iota(10)));
  ASSERT_TRUE(manager.AllocateSlots(a, 10).has_value());
  ComputeStep(manager, a, 10);

  std::vector<int32_t> prompt_b = Iota(9);  // shares tokens 0..8 with a
  prompt_b.push_back(500);
  prompt_b.push_back(501);
  Request b(MakeRequest("b", prompt_b));
  ComputedBlocks hit = manager.GetComputedBlocks(b);
  EXPECT_EQ(hit.num_computed_tokens, 8);
  const std::vector<int32_t>& a_blocks = manager.GetBlockIds("a");
  EXPECT_EQ(hit.block_ids, (std::vector<int32_t>{a_blocks[0], a_blocks[1]}));

  std::optional<std::vector<int32_t>> new_blocks = manager.AllocateSlots(b, 3, hit);
  ASSERT_TRUE(new_blocks.has_value());
  EXPECT_EQ(new_blocks->size(), 1u);
  EXPECT_EQ(manager.block_pool().block(a_blocks[0]).ref_cnt, 2);
  EXPECT_EQ(manager.GetBlockIds("b").size(), 3u);
}

TEST(KvCacheManagerTest, NeverHitsTheWholePrompt) {
  KvCacheManager manager(16, kBlockSize, 64, true);
  Request a(MakeRequest("a", Iota(8)));
  ASSERT_TRUE(manager.AllocateSlots(a, 8).has_value());
  ComputeStep(manager, a, 8);
  Request b(MakeRequest("b", Iota(8)));  // same 2 full blocks
  // The last token must be computed to get logits: hit capped at (8 - 1) / 4 = 1 block.
  EXPECT_EQ(manager.GetComputedBlocks(b).num_computed_tokens, 4);
  Request c(MakeRequest("c", Iota(9)));
  EXPECT_EQ(manager.GetComputedBlocks(c).num_computed_tokens, 8);
}

TEST(KvCacheManagerTest, BlocksArePublishedOnlyOnceComputed) {
  KvCacheManager manager(16, kBlockSize, 64, true);
  Request a(MakeRequest("a", Iota(12)));
  ASSERT_TRUE(manager.AllocateSlots(a, 12).has_value());
  Request b(MakeRequest("b", Iota(12)));
  EXPECT_EQ(manager.GetComputedBlocks(b).num_computed_tokens, 0);
  ComputeStep(manager, a, 6);  // one full block computed
  EXPECT_EQ(manager.GetComputedBlocks(b).num_computed_tokens, 4);
}

TEST(KvCacheManagerTest, FreedPrefixStaysCachedUntilEvicted) {
  KvCacheManager manager(4, kBlockSize, 16, true);
  Request a(MakeRequest("a", Iota(9)));
  ASSERT_TRUE(manager.AllocateSlots(a, 9).has_value());
  ComputeStep(manager, a, 9);
  manager.Free(a);
  EXPECT_EQ(manager.block_pool().num_free_blocks(), 4);
  EXPECT_FLOAT_EQ(manager.Usage(), 0.0f);
  Request b(MakeRequest("b", Iota(9)));
  ComputedBlocks hit = manager.GetComputedBlocks(b);
  EXPECT_EQ(hit.num_computed_tokens, 8);
  // 2 hits on free blocks + 1 new block = 3 of the 4 free blocks.
  ASSERT_TRUE(manager.AllocateSlots(b, 1, hit).has_value());
  EXPECT_EQ(manager.block_pool().num_free_blocks(), 1);
}

TEST(KvCacheManagerTest, FailedAllocationChangesNothing) {
  KvCacheManager manager(3, kBlockSize, 64, true);
  Request a(MakeRequest("a", Iota(16)));
  EXPECT_FALSE(manager.AllocateSlots(a, 16).has_value());  // needs 4 blocks, 3 exist
  EXPECT_EQ(manager.block_pool().num_free_blocks(), 3);
  EXPECT_TRUE(manager.GetBlockIds("a").empty());
  ASSERT_TRUE(manager.AllocateSlots(a, 12).has_value());
  EXPECT_EQ(manager.block_pool().num_free_blocks(), 0);
}

TEST(KvCacheManagerTest, AllocatesOnlyWhenABlockBoundaryIsCrossed) {
  KvCacheManager manager(8, kBlockSize, 64, true);
  Request a(MakeRequest("a", Iota(5)));
  EXPECT_EQ(manager.AllocateSlots(a, 5)->size(), 2u);
  ComputeStep(manager, a, 5);
  a.AppendOutputToken(1);  // 6 tokens: still fits 2 blocks
  EXPECT_EQ(manager.AllocateSlots(a, 1)->size(), 0u);
}

TEST(KvCacheManagerTest, PrefixCachingOffFindsNothing) {
  KvCacheManager manager(16, kBlockSize, 64, false);
  Request a(MakeRequest("a", Iota(10)));
  ASSERT_TRUE(manager.AllocateSlots(a, 10).has_value());
  ComputeStep(manager, a, 10);
  Request b(MakeRequest("b", Iota(10)));
  EXPECT_EQ(manager.GetComputedBlocks(b).num_computed_tokens, 0);
}

}  // namespace
}  // namespace tandem::engine
