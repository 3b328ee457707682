#include "model/layers/mlp.h"

#include "kernels/device_ops.h"

namespace tandem::model {

Mlp::Mlp(const std::vector<float>& gate, const std::vector<float>& up, std::vector<float> down,
         int64_t dim, int64_t ff)
    : Mlp(tensor::Tensor::FromF32({ff, dim}, gate), tensor::Tensor::FromF32({ff, dim}, up),
          tensor::Tensor::FromF32({dim, ff}, std::move(down))) {}

Mlp::Mlp(const tensor::Tensor& gate, const tensor::Tensor& up, tensor::Tensor down)
    : gate_up_(tensor::ConcatRows({&gate, &up})), down_(std::move(down)), ff_(gate.dim(0)) {
  TANDEM_CHECK(up.dim(0) == ff_ && down_.in_features() == ff_ &&
               down_.out_features() == gate_up_.in_features())
      << "MLP weights gate [" << gate.dim(0) << ", " << gate_up_.in_features() << "], up ["
      << up.dim(0) << ", ...], down [" << down_.out_features() << ", " << down_.in_features()
      << "] do not fit together";
}

size_t Mlp::scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const {
  return arena.BytesFor({rows, 2 * ff_}, tensor::DType::kF32) +
         arena.BytesFor({rows, ff_}, tensor::DType::kF32);
}

void Mlp::Forward(kernels::Stream& stream, const tensor::TensorView& x,
                  const tensor::TensorView& out, tensor::DeviceArena& scratch) {
  const int64_t rows = x.dim(0);
  const tensor::ArenaScope scope(scratch);
  const tensor::TensorView gate_up = scratch.AllocateOrDie({rows, 2 * ff_}, tensor::DType::kF32);
  const tensor::TensorView act = scratch.AllocateOrDie({rows, ff_}, tensor::DType::kF32);
  gate_up_.Forward(stream, x, gate_up);
  kernels::SiluMul(stream, gate_up, act);
  down_.Forward(stream, act, out);
}

}  // namespace tandem::model
