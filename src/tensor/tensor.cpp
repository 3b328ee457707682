#include "tensor/tensor.h"

#include <cstring>

namespace tandem::tensor {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(Shape shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype) {
  const size_t bytes = static_cast<size_t>(NumElements(shape_)) * DTypeSize(dtype_);
  owned_.assign((bytes + sizeof(float) - 1) / sizeof(float), 0.0f);
}

Tensor Tensor::View(Shape shape, DType dtype, const void* data) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.view_ = data;
  return t;
}

Tensor Tensor::ToF32() const {
  Tensor out(shape_, DType::kF32);
  const int64_t n = numel();
  float* dst = out.mutable_f32();
  switch (dtype_) {
    case DType::kF32:
      std::memcpy(dst, raw(), static_cast<size_t>(n) * sizeof(float));
      break;
    case DType::kF16:
    case DType::kBF16: {
      // Copy through memcpy: a view's bytes need not be 2-byte aligned.
      const auto* src = static_cast<const unsigned char*>(raw());
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = dtype_ == DType::kF16 ? HalfToFloat(h) : BFloat16ToFloat(h);
      }
      break;
    }
    case DType::kI32: {
      const auto* src = static_cast<const unsigned char*>(raw());
      for (int64_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, src + 4 * i, 4);
        dst[i] = static_cast<float>(v);
      }
      break;
    }
  }
  return out;
}

std::vector<float> Tensor::TakeF32() {
  TANDEM_CHECK(dtype_ == DType::kF32 && view_ == nullptr) << "TakeF32 needs an owning F32 tensor";
  std::vector<float> out = std::move(owned_);
  owned_.clear();
  shape_.clear();
  return out;
}

void Tensor::Reshape(Shape shape) {
  TANDEM_CHECK(NumElements(shape) == numel())
      << "reshape " << ShapeToString(shape_) << " -> " << ShapeToString(shape);
  shape_ = std::move(shape);
}

}  // namespace tandem::tensor
