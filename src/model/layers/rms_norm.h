// RmsNormLayer: RMSNorm with a learned scale [dim] f32. Reference: HF LlamaRMSNorm.
#pragma once

#include <cstdint>
#include <vector>

#include "core/step_profile.h"
#include "kernels/device_ops.h"
#include "kernels/ops.h"
#include "tensor/tensor_view.h"

namespace tandem::model {

struct RmsNormLayer {
  std::vector<float> weight;  // [dim] f32
  float eps = 1e-5f;

  // x, y: [rows, dim]; y may equal x.
  void Forward(const float* x, float* y, int64_t rows) const {
    const core::ScopedPhase phase(core::StepPhase::kNormAct);
    kernels::RmsNorm(x, weight.data(), y, rows, static_cast<int64_t>(weight.size()), eps);
  }
  // The same over views on the stream's device (a host weight: CPU streams only, until the
  // weights move into a device arena; docs/design/device-seam.md §8).
  void Forward(kernels::Stream& stream, const tensor::TensorView& x,
               const tensor::TensorView& y) const {
    const tensor::TensorView w =
        tensor::HostView({static_cast<int64_t>(weight.size())}, tensor::DType::kF32,
                         const_cast<float*>(weight.data()));
    kernels::RmsNorm(stream, x, w, y, eps);
  }
};

}  // namespace tandem::model
