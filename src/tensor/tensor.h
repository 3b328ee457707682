// Tensor: a dense row-major n-d array (shape + dtype) that either owns its bytes or views
// bytes owned by someone else (e.g. an mmapped model file). CPU only for now.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.h"
#include "tensor/dtype.h"

namespace tandem::tensor {

using Shape = std::vector<int64_t>;

// Number of elements of `shape` (1 for a scalar shape []).
int64_t NumElements(const Shape& shape);
// "[64, 172]"
std::string ShapeToString(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  // Owning, zero-filled.
  Tensor(Shape shape, DType dtype);
  // Non-owning view over `data` (must outlive the Tensor and hold NumElements(shape) elements).
  static Tensor View(Shape shape, DType dtype, const void* data);

  const Shape& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  DType dtype() const { return dtype_; }
  int64_t numel() const { return NumElements(shape_); }
  size_t size_bytes() const { return DTypeBytes(dtype_, numel()); }
  bool owns_data() const { return view_ == nullptr; }

  const void* raw() const { return view_ != nullptr ? view_ : owned_.data(); }
  // Writable bytes; only an owning tensor may be written.
  void* mutable_raw() {
    TANDEM_CHECK(view_ == nullptr) << "cannot write through a non-owning tensor view";
    return owned_.data();
  }

  const float* f32() const {
    TANDEM_CHECK(dtype_ == DType::kF32) << "tensor is " << DTypeName(dtype_) << ", not F32";
    return static_cast<const float*>(raw());
  }
  float* mutable_f32() {
    TANDEM_CHECK(dtype_ == DType::kF32) << "tensor is " << DTypeName(dtype_) << ", not F32";
    return static_cast<float*>(mutable_raw());
  }

  // Owning F32 tensor that takes `values` (NumElements(shape) of them; checked).
  static Tensor FromF32(Shape shape, std::vector<float> values);

  // Converts F32/F16/BF16/Q8_0 contents to a new owning F32 tensor of the same shape (exact).
  Tensor ToF32() const;
  // A new owning tensor of the same shape in `dtype` (F32, F16 or BF16; from F32/F16/BF16):
  // widening is exact, narrowing rounds to nearest even (FloatToHalf / FloatToBFloat16).
  Tensor To(DType dtype) const;
  // An owning copy (a view's bytes are copied out of, e.g., the mmapped file).
  Tensor Clone() const;
  // Moves the f32 contents out (owning F32 tensors only); leaves this tensor empty.
  std::vector<float> TakeF32();
  // Same bytes, new shape with the same element count.
  void Reshape(Shape shape);

 private:
  Shape shape_;
  DType dtype_ = DType::kF32;
  std::vector<float> owned_;  // float-aligned byte store for owning tensors
  const void* view_ = nullptr;
};

// Rows of a 2-d or higher tensor, counted over the outermost axis: [rows, inner...].
// ConcatRows: the tensors' rows one after the other (same inner shape; checked), as an owning
// tensor [Σ rows, inner...] in their dtype — or F32 when their dtypes differ (a checkpoint
// mixing e.g. BF16 q with F32 k). Works on bytes, so for every dtype.
Tensor ConcatRows(const std::vector<const Tensor*>& parts);
// out row i = t row src_row[i] (an owning tensor with src_row.size() rows).
Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& src_row);
// Columns [first, first + count) of the last axis of t (an owning tensor; for a block dtype
// first and count must be whole blocks: checked).
Tensor SliceColumns(const Tensor& t, int64_t first, int64_t count);

}  // namespace tandem::tensor
