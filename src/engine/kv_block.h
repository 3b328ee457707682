// KvBlock: the bookkeeping of one paged KV block (the KV itself lives in the worker).
// Reference: vLLM v1 kv_cache_utils.KVCacheBlock.
#pragma once

#include <cstdint>

#include "engine/block_hash.h"

namespace tandem::engine {

struct KvBlock {
  int32_t block_id = 0;  // index into the worker's KV storage, [0, num_gpu_blocks)
  int32_t ref_cnt = 0;   // requests whose block table holds this block
  // Set once the block is full, computed and published in the prefix cache; kept while the
  // block sits in the free queue so a later hit can revive it; cleared on eviction.
  bool has_hash = false;
  BlockHash block_hash = 0;
  // Free-queue links (FreeBlockQueue); null while the block is in use.
  KvBlock* prev_free = nullptr;
  KvBlock* next_free = nullptr;
};

}  // namespace tandem::engine
