// TensorView: a dense row-major array on some device — {device, dtype, shape, data} — that
// never owns its bytes (they belong to a DeviceArena or a loaded weight). The currency of the
// device seam (docs/design/device-seam.md §2): ops take views and a stream, so the same layer
// code runs on the CPU backend and on an accelerator's. Copyable, cheap (one shape vector).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/check.h"
#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

namespace tandem::tensor {

struct TensorView {
  Device device;
  DType dtype = DType::kF32;
  Shape shape;
  void* data = nullptr;

  int64_t numel() const { return NumElements(shape); }
  size_t size_bytes() const { return DTypeBytes(dtype, numel()); }
  int64_t dim(size_t i) const { return shape.at(i); }
  size_t rank() const { return shape.size(); }
  bool empty() const { return data == nullptr || numel() == 0; }

  // Typed pointers; the dtype is checked. Host code may dereference them only for a CPU view.
  float* f32() const {
    TANDEM_CHECK(dtype == DType::kF32) << "view is " << DTypeName(dtype) << ", not F32";
    return static_cast<float*>(data);
  }
  int32_t* i32() const {
    TANDEM_CHECK(dtype == DType::kI32) << "view is " << DTypeName(dtype) << ", not I32";
    return static_cast<int32_t*>(data);
  }

  // The same bytes as `shape` (the same number of elements; checked).
  TensorView Reshaped(Shape to) const {
    TANDEM_CHECK(NumElements(to) == numel())
        << "reshape of " << ShapeToString(shape) << " to " << ShapeToString(to);
    return TensorView{device, dtype, std::move(to), data};
  }

  // Rows [first, first + count) of the outermost axis, as a view of the same bytes (an element
  // dtype; checked, as the range).
  TensorView Rows(int64_t first, int64_t count) const {
    TANDEM_CHECK(!shape.empty() && first >= 0 && count >= 0 && first + count <= shape[0])
        << "rows [" << first << ", " << first + count << ") of a view of shape "
        << ShapeToString(shape);
    TANDEM_CHECK(DTypeBlockValues(dtype) == 1) << "Rows() of a block dtype " << DTypeName(dtype);
    const int64_t row_elems = shape[0] == 0 ? 0 : numel() / shape[0];
    Shape rows = shape;
    rows[0] = count;
    return TensorView{device, dtype, std::move(rows),
                      static_cast<char*>(data) + DTypeBytes(dtype, first * row_elems)};
  }
};

// A CPU view of a tensor's bytes (writable only through an owning tensor; checked).
inline TensorView HostView(Tensor& t) {
  return TensorView{Device{}, t.dtype(), t.shape(), t.mutable_raw()};
}
// A CPU view over host memory the caller keeps alive.
inline TensorView HostView(Shape shape, DType dtype, void* data) {
  return TensorView{Device{}, dtype, std::move(shape), data};
}

}  // namespace tandem::tensor
