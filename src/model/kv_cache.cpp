#include "model/kv_cache.h"

#include <sys/mman.h>

#include <utility>

#include "core/check.h"

namespace tandem::model {

LazyZeroBuffer::LazyZeroBuffer(size_t num_floats) : size_(num_floats) {
  if (num_floats == 0) return;
  void* p = mmap(nullptr, num_floats * sizeof(float), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  TANDEM_CHECK(p != MAP_FAILED) << "cannot map " << num_floats * sizeof(float)
                                << " bytes for the KV cache";
  data_ = static_cast<float*>(p);
}

LazyZeroBuffer::~LazyZeroBuffer() {
  if (data_ != nullptr) munmap(data_, size_ * sizeof(float));
}

LazyZeroBuffer::LazyZeroBuffer(LazyZeroBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

LazyZeroBuffer& LazyZeroBuffer::operator=(LazyZeroBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_ * sizeof(float));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void KvCache::Allocate(const KvCacheSpec& s, int32_t n_blocks, int32_t b_size,
                       int32_t n_state_slots) {
  spec = s;
  num_blocks = n_blocks;
  block_size = b_size;
  num_state_slots = s.num_state_layers > 0 ? n_state_slots : 0;
  state.clear();
  for (int32_t l = 0; l < s.num_state_layers; ++l) {
    state.emplace_back(static_cast<size_t>(num_state_slots) * s.state_floats);
  }
  const size_t elements = static_cast<size_t>(n_blocks) * b_size * s.num_kv_heads * s.head_dim;
  // LazyZeroBuffer counts floats: a 16-bit cache takes half as many.
  const size_t per_layer =
      (elements * tensor::DTypeSize(s.kv_dtype) + sizeof(float) - 1) / sizeof(float);
  key_cache.clear();
  value_cache.clear();
  for (int32_t l = 0; l < s.num_layers; ++l) {
    key_cache.emplace_back(per_layer);
    value_cache.emplace_back(per_layer);
  }
}

}  // namespace tandem::model
