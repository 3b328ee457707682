#include "engine/block_pool.h"

#include "core/check.h"

namespace tandem::engine {

namespace {

std::vector<KvBlock> MakeBlocks(int32_t num_blocks) {
  TANDEM_CHECK(num_blocks > 0) << "BlockPool needs at least one block, got " << num_blocks;
  std::vector<KvBlock> blocks(num_blocks);
  for (int32_t i = 0; i < num_blocks; ++i) blocks[i].block_id = i;
  return blocks;
}

}  // namespace

BlockPool::BlockPool(int32_t num_blocks, bool enable_caching)
    : enable_caching_(enable_caching), blocks_(MakeBlocks(num_blocks)), free_queue_(blocks_) {}

float BlockPool::Usage() const {
  return 1.0f - static_cast<float>(num_free_blocks()) / static_cast<float>(num_blocks());
}

const KvBlock& BlockPool::block(int32_t block_id) const {
  TANDEM_CHECK(block_id >= 0 && block_id < num_blocks())
      << "block id " << block_id << " out of range [0, " << num_blocks() << ")";
  return blocks_[block_id];
}

std::vector<int32_t> BlockPool::AllocateBlocks(int32_t num_new_blocks) {
  TANDEM_CHECK(num_new_blocks <= num_free_blocks())
      << "asked for " << num_new_blocks << " blocks, only " << num_free_blocks() << " free";
  std::vector<int32_t> block_ids;
  block_ids.reserve(num_new_blocks);
  for (int32_t i = 0; i < num_new_blocks; ++i) {
    KvBlock* block = free_queue_.PopFront();
    EvictIfCached(block);
    TANDEM_CHECK(block->ref_cnt == 0)
        << "free block " << block->block_id << " has ref_cnt " << block->ref_cnt;
    block->ref_cnt = 1;
    block_ids.push_back(block->block_id);
  }
  return block_ids;
}

std::optional<int32_t> BlockPool::GetCachedBlock(BlockHash block_hash) const {
  auto it = block_by_hash_.find(block_hash);
  if (it == block_by_hash_.end()) return std::nullopt;
  return it->second;
}

void BlockPool::Touch(std::span<const int32_t> block_ids) {
  for (int32_t block_id : block_ids) {
    KvBlock& block = blocks_[this->block(block_id).block_id];
    if (block.ref_cnt == 0) free_queue_.Remove(&block);
    ++block.ref_cnt;
  }
}

void BlockPool::FreeBlocks(std::span<const int32_t> ordered_block_ids) {
  for (int32_t block_id : ordered_block_ids) {
    KvBlock& block = blocks_[this->block(block_id).block_id];
    TANDEM_CHECK(block.ref_cnt > 0) << "freeing block " << block_id << " with ref_cnt 0";
    if (--block.ref_cnt == 0) free_queue_.Append(&block);
  }
}

void BlockPool::CacheBlock(int32_t block_id, BlockHash block_hash) {
  if (!enable_caching_) return;
  KvBlock& block = blocks_[this->block(block_id).block_id];
  if (block.has_hash) {
    TANDEM_CHECK(block.block_hash == block_hash)
        << "block " << block_id << " is cached under hash " << block.block_hash
        << "; asked to cache it again under " << block_hash;
    return;
  }
  if (block_by_hash_.contains(block_hash)) return;  // a duplicate stays a plain block
  block.has_hash = true;
  block.block_hash = block_hash;
  block_by_hash_.emplace(block_hash, block_id);
}

void BlockPool::EvictIfCached(KvBlock* block) {
  if (!block->has_hash) return;
  auto it = block_by_hash_.find(block->block_hash);
  TANDEM_CHECK(it != block_by_hash_.end() && it->second == block->block_id)
      << "block " << block->block_id << " has a hash the prefix cache does not map to it";
  block_by_hash_.erase(it);
  block->has_hash = false;
  block->block_hash = 0;
}

}  // namespace tandem::engine
