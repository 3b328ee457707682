// KvCacheManager: maps requests to KV block tables on top of the BlockPool, finds cached
// prefixes, and for a hybrid model gives each running request a recurrent-state slot — the
// coordinator of both cache groups (docs/design/hybrid-and-speculative.md §2). Works in token
// counts, block ids and slot ids; the caches themselves live in the worker.
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
  // num_state_slots: recurrent-state slots of a hybrid model's state group (0: none).
  KvCacheManager(int32_t num_blocks, int32_t block_size, int32_t max_model_len,
                 bool enable_prefix_caching, int32_t num_state_slots = 0);

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
  // missing; with state slots, a request without one takes a free slot too. Returns the newly
  // allocated block ids (not the cache hits), or nullopt when the pool has too few free blocks
  // or no slot is free — then nothing changed.
  // Reference: vLLM KVCacheManager.allocate_slots.
  std::optional<std::vector<int32_t>> AllocateSlots(Request& request, int32_t num_new_tokens,
                                                    const ComputedBlocks& new_computed = {});

  // Publishes in the prefix cache every full block of `request` whose KV is computed
  // (request.num_computed_tokens); call after a step advanced it.
  void CacheComputedBlocks(Request& request);

  // Releases `request`'s blocks (last block first, so its tail is evicted first) and its state
  // slot. Cached blocks stay findable until evicted. No-op for a request without blocks.
  void Free(const Request& request);

  // Block table of `request_id`, in order; empty when it holds no blocks.
  const std::vector<int32_t>& GetBlockIds(const std::string& request_id) const;

  // The state slot of `request_id`: [0, num_state_slots), or -1 when it holds none.
  int32_t GetStateSlot(const std::string& request_id) const;
  int32_t num_state_slots() const { return num_state_slots_; }
  int32_t num_state_slots_used() const {
    return num_state_slots_ - static_cast<int32_t>(free_state_slots_.size());
  }
  float Usage() const { return block_pool_.Usage(); }
  const PrefixCacheStats& prefix_cache_stats() const { return prefix_cache_stats_; }
  const BlockPool& block_pool() const { return block_pool_; }
  int32_t block_size() const { return block_size_; }

 private:
  struct RequestBlocks {
    std::vector<int32_t> block_ids;
    int32_t num_cached_blocks = 0;  // leading blocks already published (or hit)
    int32_t state_slot = -1;        // hybrid models: its recurrent-state slot
  };

  int32_t block_size_;
  int32_t max_model_len_;
  bool enable_prefix_caching_;
  BlockPool block_pool_;
  int32_t num_state_slots_;
  std::vector<int32_t> free_state_slots_;  // taken from the back: slot 0 first
  std::unordered_map<std::string, RequestBlocks> request_blocks_;
  PrefixCacheStats prefix_cache_stats_;
};

}  // namespace tandem::engine
