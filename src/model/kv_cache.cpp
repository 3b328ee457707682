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

CacheGroupSpec PagedKvGroup(std::vector<int32_t> layers, int32_t num_kv_heads, int32_t head_dim,
                            tensor::DType kv_dtype) {
  CacheGroupSpec g;
  g.kind = CacheGroupKind::kPagedKv;
  g.layers = std::move(layers);
  g.num_kv_heads = num_kv_heads;
  g.head_dim = head_dim;
  g.kv_dtype = kv_dtype;
  return g;
}

CacheGroupSpec StateSlotGroup(std::vector<int32_t> layers, int64_t state_floats) {
  CacheGroupSpec g;
  g.kind = CacheGroupKind::kStateSlot;
  g.layers = std::move(layers);
  g.state_floats = state_floats;
  return g;
}

size_t BytesPerBlock(const CacheGroups& groups, int32_t block_size) {
  size_t bytes = 0;
  for (const CacheGroupSpec& g : groups) {
    bytes += g.BytesPerBlock(block_size);
  }
  return bytes;
}

size_t BytesPerStateSlot(const CacheGroups& groups) {
  size_t bytes = 0;
  for (const CacheGroupSpec& g : groups) {
    bytes += g.BytesPerSlot();
  }
  return bytes;
}

int32_t NumLayersOf(const CacheGroups& groups, CacheGroupKind kind) {
  int32_t n = 0;
  for (const CacheGroupSpec& g : groups) {
    if (g.kind == kind) {
      n += static_cast<int32_t>(g.layers.size());
    }
  }
  return n;
}

tensor::DType KvDtypeOf(const CacheGroups& groups) {
  for (const CacheGroupSpec& g : groups) {
    if (g.kind == CacheGroupKind::kPagedKv) {
      return g.kv_dtype;
    }
  }
  return tensor::DType::kF32;
}

void KvCache::Allocate(const CacheGroups& g, int32_t n_blocks, int32_t b_size,
                       int32_t n_state_slots) {
  groups = g;
  num_blocks = n_blocks;
  block_size = b_size;
  num_state_slots = NumLayersOf(g, CacheGroupKind::kStateSlot) > 0 ? n_state_slots : 0;
  layers_.clear();
  for (size_t gi = 0; gi < g.size(); ++gi) {
    const CacheGroupSpec& spec = g[gi];
    for (int32_t layer : spec.layers) {
      TANDEM_CHECK(layer >= 0) << "cache group " << gi << " lists layer " << layer;
      if (layer >= static_cast<int32_t>(layers_.size())) {
        layers_.resize(layer + 1);
      }
      LayerStorage& storage = layers_[layer];
      TANDEM_CHECK(storage.group < 0)
          << "layer " << layer << " is in cache groups " << storage.group << " and " << gi;
      storage.group = static_cast<int32_t>(gi);
      if (spec.kind == CacheGroupKind::kStateSlot) {
        storage.state = LazyZeroBuffer(static_cast<size_t>(num_state_slots) * spec.state_floats);
        continue;
      }
      const size_t elements =
          static_cast<size_t>(n_blocks) * b_size * spec.num_kv_heads * spec.head_dim;
      // LazyZeroBuffer counts floats: a 16-bit cache takes half as many.
      const size_t floats =
          (elements * tensor::DTypeSize(spec.kv_dtype) + sizeof(float) - 1) / sizeof(float);
      storage.key = LazyZeroBuffer(floats);
      storage.value = LazyZeroBuffer(floats);
    }
  }
}

LayerCache KvCache::ForLayer(int32_t layer) {
  TANDEM_CHECK(Has(layer)) << "KvCache holds no cache for layer " << layer;
  LayerStorage& storage = layers_[layer];
  const CacheGroupSpec& spec = groups[storage.group];
  LayerCache cache;
  if (spec.kind == CacheGroupKind::kStateSlot) {
    cache.state = storage.state.data();
    cache.state_floats = spec.state_floats;
  } else {
    cache.key_cache = storage.key.data();
    cache.value_cache = storage.value.data();
    cache.kv_dtype = spec.kv_dtype;
  }
  return cache;
}

}  // namespace tandem::model
