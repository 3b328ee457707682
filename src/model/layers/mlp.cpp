#include "model/layers/mlp.h"

#include "core/step_profile.h"

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

void Mlp::Forward(const float* x, float* out, int64_t rows) {
  thread_local std::vector<float> gate_up_out, act;  // [rows, 2 * ff], [rows, ff]
  gate_up_out.resize(rows * 2 * ff_);
  act.resize(rows * ff_);
  gate_up_.Forward(x, gate_up_out.data(), rows);
  {
    const core::ScopedPhase phase(core::StepPhase::kNormAct);
    kernels::SiluMul(gate_up_out.data(), act.data(), rows, ff_);
  }
  down_.Forward(act.data(), out, rows);
}

}  // namespace tandem::model
