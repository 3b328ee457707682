#include "model/layers/weight_matmul.h"

#include <atomic>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/step_profile.h"
#include "kernels/ops.h"
#include "tensor/huge_pages.h"

namespace tandem::model {
namespace {
std::atomic<Q8_0Dot>& Q8_0DotSlot() {
  static std::atomic<Q8_0Dot> dot{Q8_0Dot::kInt8};
  return dot;
}
}  // namespace

void SetQ8_0Dot(Q8_0Dot dot) { Q8_0DotSlot().store(dot); }
Q8_0Dot GetQ8_0Dot() { return Q8_0DotSlot().load(); }

size_t Int8WeightPlan::bytes() const {
  return packed.size() + (row_sums.size() + bias.size()) * sizeof(int32_t) +
         (quant ? quant->row_scale.size() * sizeof(float) + quant->row_bias.size() * sizeof(int64_t)
                : 0);
}

namespace {

// A plan of `kind` whose segments of `segment_rows` rows (0 = all) are packed by
// `pack(first_row, rows, out)` into `bytes_of(rows, k)` bytes each.
template <typename BytesOf, typename Pack>
Int8WeightPlan PackSegments(const tensor::Tensor& w, Int8WeightPlan::Kind kind,
                            int64_t segment_rows, BytesOf bytes_of, Pack pack) {
  Int8WeightPlan plan;
  plan.kind = kind;
  const int64_t rows = tensor::NumRows(w);
  plan.k = w.shape().back();
  plan.segment_rows = segment_rows == 0 ? rows : segment_rows;
  TANDEM_CHECK(plan.segment_rows > 0 && rows % plan.segment_rows == 0)
      << tensor::DTypeName(w.dtype()) << " weight of " << rows
      << " rows does not split into segments of " << segment_rows;
  plan.segment_bytes = bytes_of(plan.segment_rows, plan.k);
  tensor::ResizeOnHugePages(plan.packed,
                            static_cast<size_t>(rows / plan.segment_rows * plan.segment_bytes));
  for (int64_t s = 0; s < rows / plan.segment_rows; ++s) {
    pack(s * plan.segment_rows, plan.segment_rows, plan.packed.data() + s * plan.segment_bytes);
  }
  return plan;
}

}  // namespace

Int8WeightPlan PlanWeight(const tensor::Tensor& w, int64_t segment_rows) {
  const int64_t k = w.shape().back();
  if (w.dtype() == tensor::DType::kQ8_0 && GetQ8_0Dot() == Q8_0Dot::kInt8 &&
      kernels::MatmulQ8_0Int8Available() && w.raw() != nullptr) {
    const auto* src = static_cast<const uint8_t*>(w.raw());
    return PackSegments(w, Int8WeightPlan::Kind::kQ8_0, segment_rows, kernels::PackedQ8_0Bytes,
                        [&](int64_t first, int64_t rows, uint8_t* out) {
                          kernels::PackQ8_0Weights(
                              src + tensor::DTypeBytes(tensor::DType::kQ8_0, first * k), rows, k,
                              out);
                        });
  }
  if (w.dtype() != tensor::DType::kI8) return Int8WeightPlan{};
  TANDEM_CHECK(w.int8_quant() != nullptr && w.raw() != nullptr)
      << "I8 weight " << tensor::ShapeToString(w.shape()) << " has no scales or no bytes";
  const auto* wq = static_cast<const int8_t*>(w.raw());
  Int8WeightPlan plan = PackSegments(
      w, Int8WeightPlan::Kind::kW8A8, segment_rows, kernels::PackedInt8Bytes,
      [&](int64_t first, int64_t rows, uint8_t* out) {
        kernels::PackInt8Weights(wq + first * k, rows, k, reinterpret_cast<int8_t*>(out));
      });
  plan.quant = w.int8_quant();
  const int64_t rows = tensor::NumRows(w);
  plan.row_sums.resize(static_cast<size_t>(rows));
  kernels::Int8RowSums(wq, rows, plan.k, plan.row_sums.data());
  const tensor::Int8Quant& quant = *plan.quant;
  if (quant.activation == tensor::Int8Quant::Activation::kStaticPerTensor) {
    plan.bias.resize(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const double b = (quant.row_bias.empty() ? 0.0 : static_cast<double>(quant.row_bias[r])) -
                       static_cast<double>(quant.input_offset) * plan.row_sums[r];
      TANDEM_CHECK(std::fabs(b) <= std::numeric_limits<int32_t>::max())
          << "static int8 bias " << b << " of row " << r << " does not fit int32";
      plan.bias[r] = static_cast<int32_t>(b);
    }
  }
  return plan;
}

tensor::Tensor DropPackedBytes(tensor::Tensor w, const Int8WeightPlan& plan) {
  if (plan.kind == Int8WeightPlan::Kind::kNone) return w;
  tensor::Tensor shape_only = tensor::Tensor::View(w.shape(), w.dtype(), nullptr);
  if (w.int8_quant() != nullptr) shape_only.set_int8_quant(w.int8_quant());
  return shape_only;
}

void MultiplyWeight(const tensor::Tensor& w, const Int8WeightPlan& plan, const float* x, float* y,
                    int64_t m, int64_t first_row, int64_t rows) {
  const core::ScopedPhase phase(core::StepPhase::kMatmul);
  const int64_t k = w.shape().back();
  if (plan.kind == Int8WeightPlan::Kind::kNone) {
    const auto* base = static_cast<const unsigned char*>(w.raw());
    kernels::MatmulTyped(x, base + tensor::DTypeBytes(w.dtype(), first_row * k), w.dtype(), y, m,
                         rows, k);
    return;
  }
  TANDEM_CHECK(rows == plan.segment_rows && first_row % plan.segment_rows == 0)
      << "packed weight rows [" << first_row << ", " << first_row + rows
      << ") are not one packed segment of " << plan.segment_rows;
  const uint8_t* segment = plan.packed.data() + first_row / plan.segment_rows * plan.segment_bytes;
  thread_local std::vector<int8_t> x_q;
  thread_local std::vector<float> x_scale;
  x_q.resize(static_cast<size_t>(m * k));
  if (plan.kind == Int8WeightPlan::Kind::kQ8_0) {
    x_scale.resize(static_cast<size_t>(m * (k / 32)));
    kernels::QuantizeRowsQ8_0(x, m, k, x_q.data(), x_scale.data());
    kernels::MatmulQ8_0Int8(x_q.data(), x_scale.data(), segment, y, m, rows, k);
    return;
  }
  const tensor::Int8Quant& quant = *plan.quant;
  const auto* packed = reinterpret_cast<const int8_t*>(segment);
  if (quant.activation == tensor::Int8Quant::Activation::kDynamicPerToken) {
    x_scale.resize(static_cast<size_t>(m));
    kernels::QuantizeRowsDynamicInt8(x, m, k, x_q.data(), x_scale.data());
    kernels::MatmulInt8(x_q.data(), packed, plan.row_sums.data() + first_row, x_scale.data(),
                        quant.row_scale.data() + first_row, nullptr, y, m, rows, k);
  } else {
    kernels::QuantizeRowsStaticInt8(x, m, k, quant.input_scale, quant.input_offset, x_q.data());
    kernels::MatmulInt8(x_q.data(), packed, plan.row_sums.data() + first_row, nullptr,
                        quant.row_scale.data() + first_row, plan.bias.data() + first_row, y, m,
                        rows, k);
  }
}

}  // namespace tandem::model
