#include "kernels/device_ops.h"

#include <algorithm>
#include <initializer_list>

#include "core/step_profile.h"
#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

using tensor::DeviceKind;
using tensor::TensorView;

// Every view of an op on the stream's device, and a kernel for that device: a CPU kernel only,
// until a second backend registers its own (docs/design/device-seam.md §8).
void CheckOnStream(const char* op, const Stream& stream,
                   std::initializer_list<const TensorView*> views) {
  for (const TensorView* v : views) {
    TANDEM_CHECK(v->device == stream.device())
        << op << ": a view on " << tensor::DeviceName(v->device) << ", the stream on "
        << tensor::DeviceName(stream.device());
  }
  TANDEM_CHECK(stream.device().kind == DeviceKind::kCpu)
      << op << " has no kernel for " << tensor::DeviceName(stream.device());
}

}  // namespace

void RmsNorm(Stream& stream, const TensorView& x, const TensorView& weight, const TensorView& y,
             float eps) {
  CheckOnStream("RmsNorm", stream, {&x, &weight, &y});
  const int64_t dim = weight.numel();
  TANDEM_CHECK(x.numel() == y.numel() && dim > 0 && x.numel() % dim == 0)
      << "RmsNorm: x " << tensor::ShapeToString(x.shape) << ", y " << tensor::ShapeToString(y.shape)
      << ", weight " << tensor::ShapeToString(weight.shape);
  const core::ScopedPhase phase(core::StepPhase::kNormAct);
  kernels::RmsNorm(x.f32(), weight.f32(), y.f32(), x.numel() / dim, dim, eps);
}

void AddInPlace(Stream& stream, const TensorView& x, const TensorView& d) {
  CheckOnStream("AddInPlace", stream, {&x, &d});
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
  CheckOnStream("GatherRows", stream, {&src, &rows, &dst});
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

}  // namespace tandem::kernels
