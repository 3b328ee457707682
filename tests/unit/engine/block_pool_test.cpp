#include "engine/block_pool.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/free_block_queue.h"

namespace tandem::engine {
namespace {

TEST(FreeBlockQueueTest, RemovesFromTheMiddleAndKeepsOrder) {
  std::vector<KvBlock> blocks(4);
  for (int32_t i = 0; i < 4; ++i) blocks[i].block_id = i;
  FreeBlockQueue queue(blocks);
  EXPECT_EQ(queue.num_free_blocks(), 4);
  queue.Remove(&blocks[2]);
  EXPECT_EQ(queue.num_free_blocks(), 3);
  EXPECT_FALSE(queue.Contains(&blocks[2]));
  queue.Append(&blocks[2]);
  std::vector<int32_t> order;
  while (queue.num_free_blocks() > 0) order.push_back(queue.PopFront()->block_id);
  EXPECT_EQ(order, (std::vector<int32_t>{0, 1, 3, 2}));
}

TEST(BlockPoolTest, AllocateTakesBlocksInIdOrderWithRefCountOne) {
  BlockPool pool(8, /*enable_caching=*/true);
  EXPECT_EQ(pool.num_free_blocks(), 8);
  std::vector<int32_t> ids = pool.AllocateBlocks(3);
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1, 2}));
  for (int32_t id : ids) EXPECT_EQ(pool.block(id).ref_cnt, 1);
  EXPECT_EQ(pool.num_free_blocks(), 5);
  EXPECT_FLOAT_EQ(pool.Usage(), 3.0f / 8.0f);
}

TEST(BlockPoolTest, SharedBlockIsFreedOnlyByItsLastReference) {
  BlockPool pool(4, true);
  std::vector<int32_t> ids = pool.AllocateBlocks(1);
  pool.Touch(ids);
  EXPECT_EQ(pool.block(ids[0]).ref_cnt, 2);
  pool.FreeBlocks(ids);
  EXPECT_EQ(pool.block(ids[0]).ref_cnt, 1);
  EXPECT_EQ(pool.num_free_blocks(), 3);
  pool.FreeBlocks(ids);
  EXPECT_EQ(pool.block(ids[0]).ref_cnt, 0);
  EXPECT_EQ(pool.num_free_blocks(), 4);
}

TEST(BlockPoolTest, FreeingLastReferenceMakesCachedBlockEvictable) {
  BlockPool pool(2, true);
  std::vector<int32_t> ids = pool.AllocateBlocks(2);
  pool.CacheBlock(ids[0], /*block_hash=*/111);
  pool.FreeBlocks(std::vector<int32_t>{ids[0]});
  // Still findable while free ...
  EXPECT_EQ(pool.GetCachedBlock(111), ids[0]);
  EXPECT_EQ(pool.num_free_blocks(), 1);
  // ... and a hit can revive it without losing its KV.
  pool.Touch(std::vector<int32_t>{ids[0]});
  EXPECT_EQ(pool.num_free_blocks(), 0);
  EXPECT_EQ(pool.GetCachedBlock(111), ids[0]);
  // Freed again, it is reused (evicted) when a new block is needed.
  pool.FreeBlocks(std::vector<int32_t>{ids[0]});
  EXPECT_EQ(pool.AllocateBlocks(1), std::vector<int32_t>{ids[0]});
  EXPECT_FALSE(pool.GetCachedBlock(111).has_value());
  EXPECT_FALSE(pool.block(ids[0]).has_hash);
  EXPECT_EQ(pool.num_cached_blocks(), 0);
}

TEST(BlockPoolTest, EvictsLeastRecentlyFreedCachedBlockFirst) {
  BlockPool pool(3, true);
  std::vector<int32_t> ids = pool.AllocateBlocks(3);
  for (int32_t i = 0; i < 3; ++i) pool.CacheBlock(ids[i], 100 + i);
  pool.FreeBlocks(std::vector<int32_t>{ids[1]});  // freed first: least recently used
  pool.FreeBlocks(std::vector<int32_t>{ids[2]});
  pool.FreeBlocks(std::vector<int32_t>{ids[0]});
  EXPECT_EQ(pool.AllocateBlocks(1), std::vector<int32_t>{ids[1]});
  EXPECT_FALSE(pool.GetCachedBlock(101).has_value());
  EXPECT_EQ(pool.GetCachedBlock(102), ids[2]);
  EXPECT_EQ(pool.GetCachedBlock(100), ids[0]);
  EXPECT_EQ(pool.AllocateBlocks(1), std::vector<int32_t>{ids[2]});
  EXPECT_EQ(pool.GetCachedBlock(100), ids[0]);
}

TEST(BlockPoolTest, DuplicateHashStaysAPlainBlock) {
  BlockPool pool(2, true);
  std::vector<int32_t> ids = pool.AllocateBlocks(2);
  pool.CacheBlock(ids[0], 7);
  pool.CacheBlock(ids[1], 7);
  EXPECT_EQ(pool.GetCachedBlock(7), ids[0]);
  EXPECT_FALSE(pool.block(ids[1]).has_hash);
  EXPECT_EQ(pool.num_cached_blocks(), 1);
}

TEST(BlockPoolTest, CachingDisabledPublishesNothing) {
  BlockPool pool(2, /*enable_caching=*/false);
  std::vector<int32_t> ids = pool.AllocateBlocks(1);
  pool.CacheBlock(ids[0], 7);
  EXPECT_FALSE(pool.GetCachedBlock(7).has_value());
}

TEST(BlockPoolDeathTest, AllocatingMoreThanFreeIsABrokenInvariant) {
  BlockPool pool(2, true);
  EXPECT_DEATH(pool.AllocateBlocks(3), "only 2 free");
}

}  // namespace
}  // namespace tandem::engine
