// WriteSafetensors: streams tensors into the safetensors format (huggingface/safetensors
// README: u64 little-endian header length, JSON header {name: {dtype, shape, data_offsets}},
// data), one file or HF-style shards plus an index. Each tensor's bytes are produced only when
// it is written, so a checkpoint larger than memory can be converted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "tensor/tensor.h"

namespace tandem::model {

struct TensorToWrite {
  std::string name;
  std::string dtype;  // safetensors dtype: "I8", "F32", "BF16", "F16", "I32", "I64"
  tensor::Shape shape;
  uint64_t bytes = 0;  // NumElements(shape) × element size
  // Produces exactly `bytes` bytes (called once, when the tensor is written).
  std::function<Result<std::vector<uint8_t>>()> produce;
};

// Writes `tensors` (in the given order) to `dir`/`stem`.safetensors, or, when their bytes exceed
// `max_shard_bytes`, to `stem`-0000i-of-0000N.safetensors shards (each at most max_shard_bytes
// unless one tensor is larger) with `stem`.safetensors.index.json mapping each name to its file.
// Header: __metadata__ {"format": "pt"}; data offsets 8-byte aligned. `on_written(i)` is called
// after tensor i. Errors: kInternal naming the file (I/O) or the tensor (a producer returning
// another size), or the producer's own error.
Status WriteSafetensors(const std::string& dir, const std::string& stem,
                        const std::vector<TensorToWrite>& tensors, uint64_t max_shard_bytes,
                        const std::function<void(size_t)>& on_written);

}  // namespace tandem::model
