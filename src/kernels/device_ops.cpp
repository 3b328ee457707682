#include "kernels/device_ops.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "core/step_profile.h"
#include "kernels/ops.h"

namespace tandem::kernels {

using tensor::DeviceKind;
using tensor::TensorView;

// Every view of an op on the stream's device, and a kernel for that device: a CPU kernel only,
// until a second backend registers its own (docs/design/device-seam.md §8).
void CheckCpuOp(const char* op, const Stream& stream,
                std::initializer_list<const TensorView*> views) {
  for (const TensorView* v : views) {
    TANDEM_CHECK(v->device == stream.device())
        << op << ": a view on " << tensor::DeviceName(v->device) << ", the stream on "
        << tensor::DeviceName(stream.device());
  }
  TANDEM_CHECK(stream.device().kind == DeviceKind::kCpu)
      << op << " has no kernel for " << tensor::DeviceName(stream.device());
}

namespace {

std::string Shapes(std::initializer_list<const TensorView*> views) {
  std::string out;
  for (const TensorView* v : views) {
    if (!out.empty()) {
      out += ", ";
    }
    out += tensor::ShapeToString(v->shape);
  }
  return out;
}

}  // namespace

void RmsNorm(Stream& stream, const TensorView& x, const TensorView& weight, const TensorView& y,
             float eps) {
  CheckCpuOp("RmsNorm", stream, {&x, &weight, &y});
  const int64_t dim = weight.numel();
  TANDEM_CHECK(x.numel() == y.numel() && dim > 0 && x.numel() % dim == 0)
      << "RmsNorm: x " << tensor::ShapeToString(x.shape) << ", y " << tensor::ShapeToString(y.shape)
      << ", weight " << tensor::ShapeToString(weight.shape);
  const core::ScopedPhase phase(core::StepPhase::kNormAct);
  kernels::RmsNorm(x.f32(), weight.f32(), y.f32(), x.numel() / dim, dim, eps);
}

void AddInPlace(Stream& stream, const TensorView& x, const TensorView& d) {
  CheckCpuOp("AddInPlace", stream, {&x, &d});
  TANDEM_CHECK(x.numel() == d.numel()) << "AddInPlace: x " << tensor::ShapeToString(x.shape)
                                       << ", d " << tensor::ShapeToString(d.shape);
  const core::ScopedPhase phase(core::StepPhase::kNormAct);
  float* xs = x.f32();
  const float* ds = d.f32();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    xs[i] += ds[i];
  }
}

void GatherRows(Stream& stream, const TensorView& src, const TensorView& rows,
                const TensorView& dst) {
  CheckCpuOp("GatherRows", stream, {&src, &rows, &dst});
  TANDEM_CHECK(src.rank() == 2 && dst.rank() == 2 && src.dim(1) == dst.dim(1) &&
               rows.numel() == dst.dim(0))
      << "GatherRows: src " << tensor::ShapeToString(src.shape) << ", rows "
      << tensor::ShapeToString(rows.shape) << ", dst " << tensor::ShapeToString(dst.shape);
  const int64_t width = src.dim(1), n = src.dim(0);
  const int32_t* index = rows.i32();
  const float* from = src.f32();
  float* to = dst.f32();
  for (int64_t i = 0; i < rows.numel(); ++i) {
    TANDEM_CHECK(index[i] >= 0 && index[i] < n) << "GatherRows: row " << index[i] << " of " << n;
    std::copy(from + index[i] * width, from + (index[i] + 1) * width, to + i * width);
  }
}

void SiluMul(Stream& stream, const TensorView& gate_up, const TensorView& out) {
  CheckCpuOp("SiluMul", stream, {&gate_up, &out});
  TANDEM_CHECK(gate_up.rank() == 2 && out.rank() == 2 && gate_up.dim(0) == out.dim(0) &&
               gate_up.dim(1) == 2 * out.dim(1))
      << "SiluMul: gate_up, out " << Shapes({&gate_up, &out});
  const core::ScopedPhase phase(core::StepPhase::kNormAct);
  kernels::SiluMul(gate_up.f32(), out.f32(), out.dim(0), out.dim(1));
}

void MulSigmoid(Stream& stream, const TensorView& x, const TensorView& gate) {
  CheckCpuOp("MulSigmoid", stream, {&x, &gate});
  TANDEM_CHECK(x.numel() == gate.numel()) << "MulSigmoid: x, gate " << Shapes({&x, &gate});
  const core::ScopedPhase phase(core::StepPhase::kNormAct);
  float* xs = x.f32();
  const float* g = gate.f32();
  for (int64_t i = 0; i < x.numel(); ++i) {
    xs[i] *= 1.0f / (1.0f + std::exp(-g[i]));
  }
}

void SigmoidGatedAdd(Stream& stream, const TensorView& out, const TensorView& y,
                     const TensorView& gate) {
  CheckCpuOp("SigmoidGatedAdd", stream, {&out, &y, &gate});
  TANDEM_CHECK(out.rank() == 2 && out.shape == y.shape && gate.numel() == out.dim(0))
      << "SigmoidGatedAdd: out, y, gate " << Shapes({&out, &y, &gate});
  const core::ScopedPhase phase(core::StepPhase::kNormAct);
  const int64_t rows = out.dim(0), dim = out.dim(1);
  float* o = out.f32();
  const float* ys = y.f32();
  const float* g = gate.f32();
  for (int64_t r = 0; r < rows; ++r) {
    const float s = 1.0f / (1.0f + std::exp(-g[r]));
    for (int64_t d = 0; d < dim; ++d) {
      o[r * dim + d] += s * ys[r * dim + d];
    }
  }
}

void Fill(Stream& stream, const TensorView& x, float value) {
  CheckCpuOp("Fill", stream, {&x});
  if (x.numel() == 0) {
    return;
  }
  std::fill(x.f32(), x.f32() + x.numel(), value);
}

void CopyColumns(Stream& stream, const TensorView& src, int64_t first_col, const TensorView& dst) {
  CheckCpuOp("CopyColumns", stream, {&src, &dst});
  TANDEM_CHECK(src.rank() == 2 && dst.rank() == 2 && src.dim(0) == dst.dim(0) && first_col >= 0 &&
               first_col + dst.dim(1) <= src.dim(1))
      << "CopyColumns: src, dst " << Shapes({&src, &dst}) << " from column " << first_col;
  const int64_t rows = src.dim(0), width = src.dim(1), w = dst.dim(1);
  if (rows == 0 || w == 0) {
    return;
  }
  const float* from = src.f32() + first_col;
  float* to = dst.f32();
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(from + r * width, from + r * width + w, to + r * w);
  }
}

void ScatterAddScaled(Stream& stream, const TensorView& src, const TensorView& rows,
                      const TensorView& weights, const TensorView& dst) {
  CheckCpuOp("ScatterAddScaled", stream, {&src, &rows, &weights, &dst});
  TANDEM_CHECK(src.rank() == 2 && dst.rank() == 2 && src.dim(1) == dst.dim(1) &&
               rows.numel() == src.dim(0) && weights.numel() == src.dim(0))
      << "ScatterAddScaled: src, rows, weights, dst " << Shapes({&src, &rows, &weights, &dst});
  const int64_t width = src.dim(1), n = dst.dim(0), m = src.dim(0);
  if (m == 0) {
    return;
  }
  const int32_t* index = rows.i32();
  const float* w = weights.f32();
  const float* from = src.f32();
  float* to = dst.f32();
  for (int64_t i = 0; i < m; ++i) {
    TANDEM_CHECK(index[i] >= 0 && index[i] < n)
        << "ScatterAddScaled: row " << index[i] << " of " << n;
    float* o = to + index[i] * width;
    const float* y = from + i * width;
    const float s = w[i];
    for (int64_t d = 0; d < width; ++d) {
      o[d] += s * y[d];
    }
  }
}

}  // namespace tandem::kernels
