// KvCacheManager: maps requests to KV block tables on top of the BlockPool, and finds cached
// prefixes. Works in token counts and block ids; the KV itself lives in the worker.
//
// Life of a request's blocks: GetComputedBlocks (longest cached prefix, at admission) →
// AllocateSlots each step (touch the hits, add blocks for the new tokens) → CacheComputedBlocks
// after each step (publish blocks whose KV is now written) → Free (finish or preemption).
// Reference: vLLM v1 kv_cache_manager.KVCacheManager (+ single_type_kv_cache_manager).
// Deviation: vLLM publishes full blocks at allocation, before their KV is computed; we publish
// them after the step that computed them, so no request can hit a block whose KV another
// request is still writing in the same step, whatever order the worker computes a batch in.
// Not thread-safe: owned by the Scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/block_pool.h"
#include "engine/request.h"

namespace tandem::engine {

// A cached prefix found for a waiting request.
struct ComputedBlocks {
  std::vector<int32_t> block_ids;   // cached full blocks of the prefix, in order
  int32_t num_computed_tokens = 0;  // block_ids.size() * block_size
};

struct PrefixCacheStats {
  int64_t num_query_tokens = 0;  // prompt tokens looked up (first admission of each request)
  int64_t num_hit_tokens = 0;    // of those, tokens found in the cache
};

class KvCacheManager {
 public:
  KvCacheManager(int32_t num_blocks, int32_t block_size, int32_t max_model_len,
                 bool enable_prefix_caching);

  // Longest prefix of `request`'s full blocks found in the prefix cache. Never the whole
  // request: at least its last token is left to compute (to get logits), so the hit is capped
  // at (num_tokens - 1) rounded down to a block boundary. Empty when caching is off. Extends
  // request.block_hashes(). Does not take references: AllocateSlots does.
  // Reference: vLLM KVCacheManager.get_computed_blocks.
  ComputedBlocks GetComputedBlocks(Request& request);

  // Counts one admission's lookup in the prefix-cache stats; nothing when caching is off (as
  // vLLM, whose prefix_cache_queries then stay 0).
  void RecordPrefixCacheQuery(int32_t num_query_tokens, int32_t num_hit_tokens);

  // Makes `request`'s block table cover request.num_computed_tokens +
  // new_computed.num_computed_tokens + num_new_tokens tokens (capped at max_model_len):
  // takes a reference on `new_computed` blocks (only at admission) and allocates what is
  // missing. Returns the newly allocated block ids (not the cache hits), or nullopt when the
  // pool has too few free blocks — then nothing changed.
  // Reference: vLLM KVCacheManager.allocate_slots.
  std::optional<std::vector<int32_t>> AllocateSlots(Request& request, int32_t num_new_tokens,
                                                    const ComputedBlocks& new_computed = {});

  // Publishes in the prefix cache every full block of `request` whose KV is computed
  // (request.num_computed_tokens); call after a step advanced it.
  void CacheComputedBlocks(Request& request);

  // Releases `request`'s blocks (last block first, so its tail is evicted first). Cached
  // blocks stay findable until evicted. No-op for a request without blocks.
  void Free(const Request& request);

  // Block table of `request_id`, in order; empty when it holds no blocks.
  const std::vector<int32_t>& GetBlockIds(const std::string& request_id) const;

  float Usage() const { return block_pool_.Usage(); }
  const PrefixCacheStats& prefix_cache_stats() const { return prefix_cache_stats_; }
  const BlockPool& block_pool() const { return block_pool_; }
  int32_t block_size() const { return block_size_; }

 private:
  struct RequestBlocks {
    std::vector<int32_t> block_ids;
    int32_t num_cached_blocks = 0;  // leading blocks already published (or hit)
  };

  int32_t block_size_;
  int32_t max_model_len_;
  bool enable_prefix_caching_;
  BlockPool block_pool_;
  std::unordered_map<std::string, RequestBlocks> request_blocks_;
  PrefixCacheStats prefix_cache_stats_;
};

}  // namespace tandem::engine
