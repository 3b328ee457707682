// FeedForward: the half of a decoder layer that works on each token alone — a dense SwiGLU Mlp,
// a sparse Moe, or a Moe plus a sigmoid-gated SharedExpert (Qwen2-MoE, Qwen3.5) — behind one
// interface, as TokenMixer is for the other half (docs/design/hybrid-and-speculative.md §1,
// docs/design/device-seam.md §6). DecoderLayer holds one and does not know which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace tandem::model {

class Moe;
class SharedExpert;

class FeedForward {
 public:
  virtual ~FeedForward() = default;

  // x: [rows, dim] f32, the normed input rows; out: [rows, dim] f32 (must not alias x),
  // overwritten with this TP rank's partial output (the caller all-reduces it over TP).
  // An expert-parallel block (expert_parallel()) must be called by every rank of its EP group
  // the same number of times, with rows = 0 (x and out may be null) when a rank has no tokens.
  // Not thread-safe (scratch buffers).
  virtual void Forward(const float* x, float* out, int64_t rows) = 0;
  // Bytes of this rank's weights.
  virtual size_t weight_bytes() const = 0;
  // True when Forward enters collectives over other DP ranks (expert parallel MoE).
  virtual bool expert_parallel() const { return false; }
};

// A sparse block: `moe`, plus `shared` added to its output when given.
std::unique_ptr<FeedForward> MoeFeedForward(Moe moe, std::optional<SharedExpert> shared);

}  // namespace tandem::model
