// FreeBlockQueue: the blocks with ref_cnt == 0, oldest-freed first. Intrusive doubly linked
// list through KvBlock::prev_free/next_free, so removing a block from the middle (a prefix-cache
// hit on a freed block) is O(1).
// Reference: vLLM v1 kv_cache_utils.FreeKVCacheBlockQueue.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kv_block.h"

namespace tandem::engine {

class FreeBlockQueue {
 public:
  // Links every block of `blocks` in the given order. The blocks must outlive the queue.
  explicit FreeBlockQueue(std::vector<KvBlock>& blocks);
  FreeBlockQueue(const FreeBlockQueue&) = delete;
  FreeBlockQueue& operator=(const FreeBlockQueue&) = delete;

  int32_t num_free_blocks() const { return num_free_blocks_; }

  // Removes and returns the head (least recently freed). The queue must not be empty.
  KvBlock* PopFront();
  // Unlinks `block`, which must be in the queue. O(1).
  void Remove(KvBlock* block);
  // Links `block` (not in the queue) at the tail: evicted last.
  void Append(KvBlock* block);
  // True when `block` is linked in this queue.
  bool Contains(const KvBlock* block) const { return block->next_free != nullptr; }

 private:
  // Sentinels: head_.next_free is the first free block, tail_.prev_free the last.
  KvBlock head_;
  KvBlock tail_;
  int32_t num_free_blocks_ = 0;
};

}  // namespace tandem::engine
