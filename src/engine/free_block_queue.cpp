#include "engine/free_block_queue.h"

#include "core/check.h"

namespace tandem::engine {

FreeBlockQueue::FreeBlockQueue(std::vector<KvBlock>& blocks) {
  head_.block_id = -1;
  tail_.block_id = -1;
  head_.next_free = &tail_;
  tail_.prev_free = &head_;
  for (KvBlock& block : blocks) Append(&block);
}

KvBlock* FreeBlockQueue::PopFront() {
  TANDEM_CHECK(num_free_blocks_ > 0) << "PopFront on an empty free block queue";
  KvBlock* block = head_.next_free;
  Remove(block);
  return block;
}

void FreeBlockQueue::Remove(KvBlock* block) {
  TANDEM_CHECK(Contains(block)) << "block " << block->block_id << " is not in the free queue";
  block->prev_free->next_free = block->next_free;
  block->next_free->prev_free = block->prev_free;
  block->prev_free = nullptr;
  block->next_free = nullptr;
  --num_free_blocks_;
}

void FreeBlockQueue::Append(KvBlock* block) {
  TANDEM_CHECK(!Contains(block)) << "block " << block->block_id << " is already free";
  KvBlock* last = tail_.prev_free;
  last->next_free = block;
  block->prev_free = last;
  block->next_free = &tail_;
  tail_.prev_free = block;
  ++num_free_blocks_;
}

}  // namespace tandem::engine
