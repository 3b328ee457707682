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
  size_t size_bytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }
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

  // Converts F32/F16/BF16 contents to a new owning F32 tensor of the same shape.
  Tensor ToF32() const;
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

}  // namespace tandem::tensor
