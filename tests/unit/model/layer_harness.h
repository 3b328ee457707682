// Runs one model layer (a TokenMixer or a FeedForward) on the CPU backend the way DecoderModel
// does: on a stream, with its scratch from an activation arena reserved at exactly the bytes
// the layer declares (scratch_bytes), so a layer that takes more than it declares aborts in the
// test (docs/design/device-seam.md §3.1).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "tensor/device_arena.h"
#include "tensor/tensor_view.h"

namespace tandem::model::layer_testing {

class LayerHarness {
 public:
  // A fresh arena of exactly `declared` bytes for the next Forward.
  tensor::DeviceArena& Arena(size_t declared) {
    arena_ = std::make_unique<tensor::DeviceArena>(kernels::CpuBackend().allocator(), "layer test");
    EXPECT_TRUE(arena_->Reserve(declared).ok());
    declared_ = declared;
    return *arena_;
  }
  // After a Forward: its scratch was released and stayed within the declaration.
  void ExpectReleased() const {
    EXPECT_EQ(arena_->used(), 0u);
    EXPECT_LE(arena_->high_water(), declared_);
  }
  kernels::Stream& stream() { return *stream_; }
  // An empty arena of the same alignment, for a layer's scratch_bytes(rows, arena).
  const tensor::DeviceArena& probe() const { return probe_; }

 private:
  std::unique_ptr<kernels::Stream> stream_ = kernels::CpuBackend().CreateStream();
  std::unique_ptr<tensor::DeviceArena> arena_;
  tensor::DeviceArena probe_{kernels::CpuBackend().allocator(), "probe"};
  size_t declared_ = 0;
};

// A [rows, width] f32 CPU view of host floats.
inline tensor::TensorView Rows(const float* data, int64_t rows, int64_t width) {
  return tensor::HostView({rows, width}, tensor::DType::kF32, const_cast<float*>(data));
}

}  // namespace tandem::model::layer_testing
