#include "model/kv_cache.h"

namespace tandem::model {

void KvCache::Allocate(const KvCacheSpec& s, int32_t n_blocks, int32_t b_size) {
  spec = s;
  num_blocks = n_blocks;
  block_size = b_size;
  const size_t per_layer = static_cast<size_t>(n_blocks) * b_size * s.num_kv_heads * s.head_dim;
  key_cache.assign(s.num_layers, std::vector<float>(per_layer, 0.0f));
  value_cache.assign(s.num_layers, std::vector<float>(per_layer, 0.0f));
}

}  // namespace tandem::model
