#include "model/layers/mlp.h"

namespace tandem::model {

Mlp::Mlp(const std::vector<float>& gate, const std::vector<float>& up, std::vector<float> down,
         int64_t dim, int64_t ff)
    : ff_(ff) {
  std::vector<float> fused;
  fused.reserve(gate.size() + up.size());
  fused.insert(fused.end(), gate.begin(), gate.end());
  fused.insert(fused.end(), up.begin(), up.end());
  gate_up_ = Linear(std::move(fused), 2 * ff, dim);
  down_ = Linear(std::move(down), dim, ff);
}

void Mlp::Forward(const float* x, float* out, int64_t rows) {
  gate_up_out_.resize(rows * 2 * ff_);
  act_.resize(rows * ff_);
  gate_up_.Forward(x, gate_up_out_.data(), rows);
  kernels::SiluMul(gate_up_out_.data(), act_.data(), rows, ff_);
  down_.Forward(act_.data(), out, rows);
}

}  // namespace tandem::model
