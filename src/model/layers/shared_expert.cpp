#include "model/layers/shared_expert.h"

#include <cmath>

namespace tandem::model {

SharedExpert::SharedExpert(Mlp mlp, std::vector<float> gate, int64_t dim, const EpContext& ep)
    : mlp_(std::move(mlp)), gate_(std::move(gate), 1, dim), dim_(dim), ep_(ep) {}

void SharedExpert::AddForward(const float* x, float* out, int64_t rows) {
  if (ep_.enabled()) {
    const RowRange mine = DispatchRowsOf(rows, ep_.tp_rank, ep_.tp_size);
    x += mine.first * dim_;
    out += mine.first * dim_;
    rows = mine.count;
  }
  if (rows == 0) return;
  y_.resize(rows * dim_);
  g_.resize(rows);
  mlp_.Forward(x, y_.data(), rows);
  gate_.Forward(x, g_.data(), rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float s = 1.0f / (1.0f + std::exp(-g_[r]));
    float* o = out + r * dim_;
    const float* y = &y_[r * dim_];
    for (int64_t d = 0; d < dim_; ++d) o[d] += s * y[d];
  }
}

}  // namespace tandem::model
