// KvCache: paged key/value storage for every attention layer, owned by the worker and
// written/read by the model's attention layers through ForwardContext::slot_mapping and
// block_tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/dtype.h"

namespace tandem::model {

// Cache groups (docs/design/hybrid-and-speculative.md §2): the layers whose cache has one form
// and one size per member. A paged-KV group's members each hold K and V blocks [num_blocks,
// block_size, num_kv_heads, head_dim] of kv_dtype, addressed through the block table every paged
// group shares (a block id names the same block in each); a state-slot group's members each
// hold [num_state_slots, state_floats] f32, one slot per running sequence, the same slot in
// every member. A model lists its groups (Model::cache_groups()); the worker sizes the pools
// from them and hands each layer its part (KvCache::ForLayer).
enum class CacheGroupKind { kPagedKv, kStateSlot };

struct CacheGroupSpec {
  CacheGroupKind kind = CacheGroupKind::kPagedKv;
  std::vector<int32_t> layers;  // model layer indices; an MTP head's layer is info.num_layers
  int32_t num_kv_heads = 0;     // paged: KV heads on this TP rank
  int32_t head_dim = 0;         // paged
  tensor::DType kv_dtype = tensor::DType::kF32;  // paged: K/V elements (--kv-cache-dtype)
  int64_t state_floats = 0;  // state: f32 values of one sequence's state in one member layer

  // Paged: bytes of one block over all members, K and V (0 for a state group).
  size_t BytesPerBlock(int32_t block_size) const {
    if (kind != CacheGroupKind::kPagedKv) {
      return 0;
    }
    return layers.size() * 2 * static_cast<size_t>(block_size) * num_kv_heads * head_dim *
           tensor::DTypeSize(kv_dtype);
  }
  // State: bytes of one sequence's state over all members, f32 (0 for a paged group).
  size_t BytesPerSlot() const {
    if (kind != CacheGroupKind::kStateSlot) {
      return 0;
    }
    return layers.size() * static_cast<size_t>(state_floats) * sizeof(float);
  }
  bool operator==(const CacheGroupSpec&) const = default;
};
using CacheGroups = std::vector<CacheGroupSpec>;

CacheGroupSpec PagedKvGroup(std::vector<int32_t> layers, int32_t num_kv_heads, int32_t head_dim,
                            tensor::DType kv_dtype = tensor::DType::kF32);
CacheGroupSpec StateSlotGroup(std::vector<int32_t> layers, int64_t state_floats);
// Bytes of one block id over every paged group (what one block of the pool costs).
size_t BytesPerBlock(const CacheGroups& groups, int32_t block_size);
// Bytes of one sequence's state over every state group (what one state slot costs).
size_t BytesPerStateSlot(const CacheGroups& groups);
// Member layers of the groups of `kind`.
int32_t NumLayersOf(const CacheGroups& groups, CacheGroupKind kind);
// The K/V element type of the paged groups (F32 when there are none).
tensor::DType KvDtypeOf(const CacheGroups& groups);

// The cache one layer reads and writes across steps: paged attention's key_cache /
// value_cache, each [num_blocks, block_size, num_kv_heads, head_dim] of kv_dtype, addressed
// through ForwardContext::slot_mapping and block_tables; or a linear-attention layer's state
// slots, [num_slots, state_floats] f32, where sequence s of a batch owns slot
// ctx.state_slots[s].
struct LayerCache {
  void* key_cache = nullptr;  // elements of kv_dtype
  void* value_cache = nullptr;
  float* state = nullptr;
  int64_t state_floats = 0;                      // floats per slot
  tensor::DType kv_dtype = tensor::DType::kF32;  // --kv-cache-dtype
};

// A zero-filled f32 buffer whose pages the kernel provides on first write (anonymous mmap):
// a large KV pool costs no time at start and no memory until sequences use it.
class LazyZeroBuffer {
 public:
  LazyZeroBuffer() = default;
  explicit LazyZeroBuffer(size_t num_floats);
  ~LazyZeroBuffer();
  LazyZeroBuffer(LazyZeroBuffer&& other) noexcept;
  LazyZeroBuffer& operator=(LazyZeroBuffer&& other) noexcept;
  LazyZeroBuffer(const LazyZeroBuffer&) = delete;
  LazyZeroBuffer& operator=(const LazyZeroBuffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }
  float& operator[](size_t i) { return data_[i]; }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
};

struct KvCache {
  int32_t num_blocks = 0;
  int32_t block_size = 16;
  int32_t num_state_slots = 0;  // 0 without a state group
  CacheGroups groups;

  // Allocates zeroed storage for every member layer of `groups`: `num_blocks` blocks of
  // `block_size` tokens for the paged ones, `num_state_slots` slots for the state ones (lazily:
  // pages are committed when first written). Aborts (TANDEM_CHECK) when the address space is
  // refused or a layer is in two groups.
  void Allocate(const CacheGroups& groups, int32_t num_blocks, int32_t block_size,
                int32_t num_state_slots = 0);
  // Whether model layer `layer` has a cache here.
  bool Has(int32_t layer) const {
    return layer >= 0 && layer < static_cast<int32_t>(layers_.size()) && layers_[layer].group >= 0;
  }
  // The cache of model layer `layer`. Aborts (TANDEM_CHECK) naming the layer when no group holds
  // it (a caller bug: the model lists its own groups).
  LayerCache ForLayer(int32_t layer);

 private:
  struct LayerStorage {
    int32_t group = -1;  // index into groups, -1 = no cache
    LazyZeroBuffer key, value, state;
  };
  std::vector<LayerStorage> layers_;  // by model layer index
};

}  // namespace tandem::model
