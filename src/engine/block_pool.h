// BlockPool: owns the bookkeeping of every KV block — ref counts, the free queue and the
// prefix-cache map hash -> block.
//
// Invariants:
//  - a block is in the free queue iff its ref_cnt is 0;
//  - a block with has_hash is the one block the map holds for that hash, whether in use or
//    free; a free cached block keeps its hash until it is popped for reuse (evicted), so the
//    free queue doubles as the LRU list of the prefix cache: blocks freed later sit nearer the
//    tail and are evicted later.
// No null block is reserved (vLLM reserves block 0 for skipped sliding-window slots; we have
// no sliding window yet): every id in [0, num_blocks) is usable and padding uses slot -1.
// Reference: vLLM v1 block_pool.BlockPool. Deviation: one block per hash (vLLM keeps every
// duplicate); a duplicate full block simply stays unhashed and is reused as a plain block.
// Not thread-safe: owned by the engine core's scheduler thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/block_hash.h"
#include "engine/free_block_queue.h"
#include "engine/kv_block.h"

namespace tandem::engine {

class BlockPool {
 public:
  // `num_blocks` > 0 blocks, all free. `enable_caching` false: CacheBlock is a no-op.
  BlockPool(int32_t num_blocks, bool enable_caching);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  // Blocks with ref_cnt 0, cached (evictable) ones included.
  int32_t num_free_blocks() const { return free_queue_.num_free_blocks(); }
  // Blocks in use / all blocks, in [0, 1].
  float Usage() const;
  const KvBlock& block(int32_t block_id) const;

  // Takes `num_new_blocks` blocks from the head of the free queue (least recently freed),
  // evicting their prefix-cache entries, and gives each ref_cnt 1. The caller must have
  // checked num_free_blocks() (TANDEM_CHECK otherwise). Returns their ids in order.
  std::vector<int32_t> AllocateBlocks(int32_t num_new_blocks);

  // The block that holds `block_hash`, if cached (in use or free).
  std::optional<int32_t> GetCachedBlock(BlockHash block_hash) const;

  // Adds one reference to each block; a free one leaves the free queue (a cache hit revives
  // it). Reference: vLLM BlockPool.touch.
  void Touch(std::span<const int32_t> block_ids);

  // Drops one reference from each block, in order; blocks that reach 0 are appended to the
  // free queue tail in that order (callers pass a request's blocks last-first so its tail
  // blocks, least likely to be shared, are evicted first).
  void FreeBlocks(std::span<const int32_t> ordered_block_ids);

  // Publishes the full, computed block `block_id` under `block_hash`. No-op when caching is off,
  // when the block already carries this hash, or when another block already holds the hash.
  void CacheBlock(int32_t block_id, BlockHash block_hash);

  // Blocks currently published in the prefix cache (in use or free).
  int32_t num_cached_blocks() const { return static_cast<int32_t>(block_by_hash_.size()); }

 private:
  void EvictIfCached(KvBlock* block);

  bool enable_caching_;
  std::vector<KvBlock> blocks_;  // never resized: FreeBlockQueue links point into it
  FreeBlockQueue free_queue_;
  std::unordered_map<BlockHash, int32_t> block_by_hash_;
};

}  // namespace tandem::engine
