// KvCache: paged key/value storage for every attention layer, owned by the worker and
// written/read by the model's attention layers through ForwardContext::slot_mapping and
// block_tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/dtype.h"

namespace tandem::model {

// What one model needs per KV block, and per sequence of recurrent state; the worker sizes the
// pools from it. Two cache groups (docs/design/hybrid-and-speculative.md §2): paged KV blocks
// for attention layers, one fixed-size state slot per running sequence for linear-attention
// layers (hybrid models such as Qwen3.5).
struct KvCacheSpec {
  int32_t num_layers = 0;    // attention layers holding KV
  int32_t num_kv_heads = 0;  // KV heads on this TP rank
  int32_t head_dim = 0;
  int32_t num_state_layers = 0;  // linear-attention layers holding a state per sequence
  int64_t state_floats = 0;      // f32 values of one sequence's state in one such layer
  tensor::DType kv_dtype = tensor::DType::kF32;  // K/V elements (--kv-cache-dtype)
  // bytes of one block over all layers, K and V
  size_t BytesPerBlock(int32_t block_size) const {
    return static_cast<size_t>(num_layers) * 2 * block_size * num_kv_heads * head_dim *
           tensor::DTypeSize(kv_dtype);
  }
  // bytes of one sequence's state over all linear-attention layers, f32
  size_t BytesPerStateSlot() const {
    return static_cast<size_t>(num_state_layers) * state_floats * sizeof(float);
  }
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
  KvCacheSpec spec;
  // Per attention layer: [num_blocks, block_size, num_kv_heads, head_dim] of spec.kv_dtype,
  // row-major (a 16-bit cache fills half the floats of its buffer).
  std::vector<LazyZeroBuffer> key_cache;
  std::vector<LazyZeroBuffer> value_cache;
  // Per linear-attention layer: [num_state_slots, spec.state_floats] f32.
  int32_t num_state_slots = 0;
  std::vector<LazyZeroBuffer> state;

  // Allocates zeroed storage for `num_blocks` blocks of `block_size` tokens and, when the spec
  // has linear-attention layers, `num_state_slots` state slots (lazily: pages are committed
  // when first written). Aborts (TANDEM_CHECK) when the address space is refused.
  void Allocate(const KvCacheSpec& spec, int32_t num_blocks, int32_t block_size,
                int32_t num_state_slots = 0);
  // f32 offset of (slot, kv_head 0) in a layer's key_cache / value_cache.
  size_t SlotOffset(int64_t slot) const {
    return static_cast<size_t>(slot) * spec.num_kv_heads * spec.head_dim;
  }
};

}  // namespace tandem::model
