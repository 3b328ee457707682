#include "engine/kv_cache_manager.h"

#include <algorithm>

#include "core/check.h"

namespace tandem::engine {

KvCacheManager::KvCacheManager(int32_t num_blocks, int32_t block_size, int32_t max_model_len,
                               bool enable_prefix_caching, int32_t num_state_slots)
    : block_size_(block_size),
      max_model_len_(max_model_len),
      enable_prefix_caching_(enable_prefix_caching),
      block_pool_(num_blocks, enable_prefix_caching),
      num_state_slots_(num_state_slots) {
  TANDEM_CHECK(block_size > 0) << "block_size must be positive, got " << block_size;
  TANDEM_CHECK(num_state_slots >= 0) << "num_state_slots " << num_state_slots;
  for (int32_t slot = num_state_slots - 1; slot >= 0; --slot) {
    free_state_slots_.push_back(slot);
  }
}

ComputedBlocks KvCacheManager::GetComputedBlocks(Request& request) {
  ComputedBlocks computed;
  // prompt_logprobs needs every prompt position computed: no cache hits (vLLM skips reading
  // the prefix cache for such requests; their blocks are still cached for others).
  if (!enable_prefix_caching_ || request.num_tokens() == 0 ||
      request.sampling().prompt_logprobs >= 0) {
    return computed;
  }
  AppendFullBlockHashes(request.all_token_ids(), block_size_, &request.block_hashes(),
                        request.root_block_hash());
  const size_t max_hit_blocks = static_cast<size_t>((request.num_tokens() - 1) / block_size_);
  const std::vector<BlockHash>& hashes = request.block_hashes();
  for (size_t i = 0; i < std::min(max_hit_blocks, hashes.size()); ++i) {
    std::optional<int32_t> block_id = block_pool_.GetCachedBlock(hashes[i]);
    if (!block_id) break;
    computed.block_ids.push_back(*block_id);
  }
  computed.num_computed_tokens = static_cast<int32_t>(computed.block_ids.size()) * block_size_;
  return computed;
}

void KvCacheManager::RecordPrefixCacheQuery(int32_t num_query_tokens, int32_t num_hit_tokens) {
  if (!enable_prefix_caching_) return;
  prefix_cache_stats_.num_query_tokens += num_query_tokens;
  prefix_cache_stats_.num_hit_tokens += num_hit_tokens;
}

std::optional<std::vector<int32_t>> KvCacheManager::AllocateSlots(
    Request& request, int32_t num_new_tokens, const ComputedBlocks& new_computed) {
  TANDEM_CHECK(num_new_tokens >= 0)
      << "request " << request.request_id() << ": num_new_tokens " << num_new_tokens;
  auto it = request_blocks_.find(request.request_id());
  const int32_t num_held_blocks =
      it == request_blocks_.end() ? 0 : static_cast<int32_t>(it->second.block_ids.size());
  const int32_t num_hit_blocks = static_cast<int32_t>(new_computed.block_ids.size());
  TANDEM_CHECK(num_hit_blocks == 0 || num_held_blocks == 0)
      << "request " << request.request_id() << " got cache hits while holding blocks";

  const int32_t num_computed_tokens =
      request.num_computed_tokens + new_computed.num_computed_tokens;
  const int32_t num_tokens_need_slot =
      std::min(num_computed_tokens + num_new_tokens, max_model_len_);
  const int32_t num_required_blocks = (num_tokens_need_slot + block_size_ - 1) / block_size_;
  const int32_t num_new_blocks =
      std::max(0, num_required_blocks - num_held_blocks - num_hit_blocks);
  // Hits on free (cached, ref_cnt 0) blocks take them out of the free queue too.
  const int32_t num_evictable_hits = static_cast<int32_t>(
      std::count_if(new_computed.block_ids.begin(), new_computed.block_ids.end(),
                    [&](int32_t id) { return block_pool_.block(id).ref_cnt == 0; }));
  if (num_new_blocks + num_evictable_hits > block_pool_.num_free_blocks()) return std::nullopt;
  const bool needs_slot =
      num_state_slots_ > 0 && (it == request_blocks_.end() || it->second.state_slot < 0);
  if (needs_slot && free_state_slots_.empty()) {
    return std::nullopt;
  }

  RequestBlocks& blocks = request_blocks_[request.request_id()];
  if (needs_slot) {
    blocks.state_slot = free_state_slots_.back();
    free_state_slots_.pop_back();
  }
  if (num_hit_blocks > 0) {
    block_pool_.Touch(new_computed.block_ids);
    blocks.block_ids = new_computed.block_ids;
    blocks.num_cached_blocks = num_hit_blocks;
  }
  std::vector<int32_t> new_block_ids = block_pool_.AllocateBlocks(num_new_blocks);
  blocks.block_ids.insert(blocks.block_ids.end(), new_block_ids.begin(), new_block_ids.end());
  return new_block_ids;
}

void KvCacheManager::CacheComputedBlocks(Request& request) {
  if (!enable_prefix_caching_) return;
  auto it = request_blocks_.find(request.request_id());
  if (it == request_blocks_.end()) return;
  RequestBlocks& blocks = it->second;
  AppendFullBlockHashes(request.all_token_ids(), block_size_, &request.block_hashes(),
                        request.root_block_hash());
  const int32_t num_full_blocks = std::min({request.num_computed_tokens / block_size_,
                                            static_cast<int32_t>(blocks.block_ids.size()),
                                            static_cast<int32_t>(request.block_hashes().size())});
  for (int32_t i = blocks.num_cached_blocks; i < num_full_blocks; ++i) {
    block_pool_.CacheBlock(blocks.block_ids[i], request.block_hashes()[i]);
  }
  blocks.num_cached_blocks = std::max(blocks.num_cached_blocks, num_full_blocks);
}

void KvCacheManager::Free(const Request& request) {
  auto it = request_blocks_.find(request.request_id());
  if (it == request_blocks_.end()) return;
  std::vector<int32_t> reversed(it->second.block_ids.rbegin(), it->second.block_ids.rend());
  block_pool_.FreeBlocks(reversed);
  if (it->second.state_slot >= 0) {
    free_state_slots_.push_back(it->second.state_slot);
  }
  request_blocks_.erase(it);
}

int32_t KvCacheManager::GetStateSlot(const std::string& request_id) const {
  auto it = request_blocks_.find(request_id);
  return it == request_blocks_.end() ? -1 : it->second.state_slot;
}

const std::vector<int32_t>& KvCacheManager::GetBlockIds(const std::string& request_id) const {
  static const std::vector<int32_t> kNoBlocks;
  auto it = request_blocks_.find(request_id);
  return it == request_blocks_.end() ? kNoBlocks : it->second.block_ids;
}

}  // namespace tandem::engine
