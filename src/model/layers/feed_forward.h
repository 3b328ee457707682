// FeedForward: the half of a decoder layer that works on each token alone — a dense SwiGLU Mlp,
// a sparse Moe, or a Moe plus a sigmoid-gated SharedExpert (Qwen2-MoE, Qwen3.5) — behind one
// interface, as TokenMixer is for the other half (docs/design/hybrid-and-speculative.md §1,
// docs/design/device-seam.md §6). DecoderLayer holds one and does not know which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "kernels/backend.h"
#include "tensor/device_arena.h"
#include "tensor/tensor_view.h"

namespace tandem::model {

class Moe;
class SharedExpert;

class FeedForward {
 public:
  virtual ~FeedForward() = default;

  // x: [rows, dim] f32, the normed input rows; out: [rows, dim] f32 (must not alias x),
  // overwritten with this TP rank's partial output (the caller all-reduces it over TP); both on
  // `stream`'s device. Scratch comes from `scratch` (the model's activation arena) inside an
  // ArenaScope, at most scratch_bytes(rows, scratch) of it; the caller reserved that much.
  // An expert-parallel block (expert_parallel()) must be called by every rank of its EP group
  // the same number of times, with rows = 0 (empty views) when a rank has no tokens.
  // Not thread-safe.
  virtual void Forward(kernels::Stream& stream, const tensor::TensorView& x,
                       const tensor::TensorView& out, tensor::DeviceArena& scratch) = 0;
  // The most bytes Forward takes from `arena` for `rows` tokens (alignment padding included;
  // docs/design/device-seam.md §3.1).
  virtual size_t scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const = 0;
  // Bytes of this rank's weights.
  virtual size_t weight_bytes() const = 0;
  // True when Forward enters collectives over other DP ranks (expert parallel MoE).
  virtual bool expert_parallel() const { return false; }
};

// A sparse block: `moe`, plus `shared` added to its output when given.
std::unique_ptr<FeedForward> MoeFeedForward(Moe moe, std::optional<SharedExpert> shared);

}  // namespace tandem::model
