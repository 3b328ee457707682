#include "model/layers/weight_matmul.h"

#include <cmath>
#include <limits>

#include "core/check.h"
#include "kernels/ops.h"

namespace tandem::model {

Int8WeightPlan PlanWeight(const tensor::Tensor& w) {
  Int8WeightPlan plan;
  if (w.dtype() != tensor::DType::kI8) return plan;
  const auto& quant = w.int8_quant();
  TANDEM_CHECK(quant != nullptr) << "I8 weight " << tensor::ShapeToString(w.shape())
                                 << " has no scales (loader bug)";
  const int64_t rows = tensor::NumRows(w), k = w.shape().back();
  plan.row_sums.resize(static_cast<size_t>(rows));
  kernels::Int8RowSums(static_cast<const int8_t*>(w.raw()), rows, k, plan.row_sums.data());
  if (quant->activation == tensor::Int8Quant::Activation::kStaticPerTensor) {
    plan.bias.resize(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const double b = (quant->row_bias.empty() ? 0.0 : static_cast<double>(quant->row_bias[r])) -
                       static_cast<double>(quant->input_offset) * plan.row_sums[r];
      TANDEM_CHECK(std::fabs(b) <= std::numeric_limits<int32_t>::max())
          << "static int8 bias " << b << " of row " << r << " does not fit int32";
      plan.bias[r] = static_cast<int32_t>(b);
    }
  }
  return plan;
}

void MultiplyWeight(const tensor::Tensor& w, const Int8WeightPlan& plan, const float* x, float* y,
                    int64_t m, int64_t first_row, int64_t rows) {
  const int64_t k = w.shape().back();
  const auto* base = static_cast<const unsigned char*>(w.raw());
  if (w.dtype() != tensor::DType::kI8) {
    kernels::MatmulTyped(x, base + tensor::DTypeBytes(w.dtype(), first_row * k), w.dtype(), y, m,
                         rows, k);
    return;
  }
  const tensor::Int8Quant& quant = *w.int8_quant();
  thread_local std::vector<int8_t> x_q;
  thread_local std::vector<float> x_scale;
  x_q.resize(static_cast<size_t>(m * k));
  const int8_t* wq = reinterpret_cast<const int8_t*>(base) + first_row * k;
  if (quant.activation == tensor::Int8Quant::Activation::kDynamicPerToken) {
    x_scale.resize(static_cast<size_t>(m));
    kernels::QuantizeRowsDynamicInt8(x, m, k, x_q.data(), x_scale.data());
    kernels::MatmulInt8(x_q.data(), wq, plan.row_sums.data() + first_row, x_scale.data(),
                        quant.row_scale.data() + first_row, nullptr, y, m, rows, k);
  } else {
    kernels::QuantizeRowsStaticInt8(x, m, k, quant.input_scale, quant.input_offset, x_q.data());
    kernels::MatmulInt8(x_q.data(), wq, plan.row_sums.data() + first_row, nullptr,
                        quant.row_scale.data() + first_row, plan.bias.data() + first_row, y, m,
                        rows, k);
  }
}

}  // namespace tandem::model
