// Mlp: SwiGLU feed-forward, down(silu(gate(x)) * up(x)), with gate and up fused into one
// [2 * ff, dim] matmul. Reference: HF LlamaMLP.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "tensor/device_arena.h"
#include "tensor/tensor_view.h"

#include "model/layers/feed_forward.h"
#include "model/layers/linear.h"
#include "tensor/tensor.h"

namespace tandem::model {

class Mlp : public FeedForward {
 public:
  Mlp() = default;
  // gate, up: [ff, dim]; down: [dim, ff], row-major f32.
  Mlp(const std::vector<float>& gate, const std::vector<float>& up, std::vector<float> down,
      int64_t dim, int64_t ff);
  // The same in one stored dtype (F32/F16/BF16, kept): gate, up [ff, dim], down [dim, ff].
  Mlp(const tensor::Tensor& gate, const tensor::Tensor& up, tensor::Tensor down);

  // x, out: [rows, dim] (must not alias); scratch: [rows, 3 * ff] f32 from `scratch`.
  void Forward(kernels::Stream& stream, const tensor::TensorView& x, const tensor::TensorView& out,
               tensor::DeviceArena& scratch) override;
  size_t scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const override;
  size_t weight_bytes() const override { return gate_up_.weight_bytes() + down_.weight_bytes(); }

 private:
  Linear gate_up_;  // [2 * ff, dim]: gate rows then up rows
  Linear down_;     // [dim, ff]
  int64_t ff_ = 0;
};

}  // namespace tandem::model
