// Tensor: a dense row-major n-d array (shape + dtype) that either owns its bytes or views
// bytes owned by someone else (e.g. an mmapped model file). CPU only for now.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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

// How an int8 weight (DType::kI8, [.., out, in]) multiplies (docs/design/w8a8.md). Rows are
// counted over every axis but the last. Immutable once attached to a tensor.
struct Int8Quant {
  enum class Activation {
    kDynamicPerToken,  // symmetric int8 per activation row, s_x = max|x| / 127 (W8A8_DYNAMIC)
    kStaticPerTensor,  // asymmetric: x_q = clamp(rint(x / input_scale + input_offset), -128, 127)
  };
  Activation activation = Activation::kDynamicPerToken;
  float input_scale = 1.0f;   // static only
  float input_offset = 0.0f;  // static only (an integer value)
  // [rows] f32: weight_scale (dynamic) or deq_scale = input_scale · weight_scale (static).
  std::vector<float> row_scale;
  // [rows] static only: quant_bias[n] + input_offset · Σ_k W_q[n, k] over ALL columns of the
  // checkpoint's row (the bias without the zero-point term); empty when dynamic or when this
  // tensor is a column slice that does not start at column 0 (the bias is added on one slice).
  std::vector<int64_t> row_bias;

  // "W8A8_DYNAMIC" / "W8A8 static" for messages.
  const char* name() const {
    return activation == Activation::kDynamicPerToken ? "W8A8 dynamic" : "W8A8 static";
  }
};

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

  // The int8 scheme of a quantized weight (null for every other tensor).
  const std::shared_ptr<const Int8Quant>& int8_quant() const { return int8_quant_; }
  // Attaches `quant` to this I8 tensor; its row_scale (and row_bias, if any) must have one entry
  // per row (checked).
  void set_int8_quant(std::shared_ptr<const Int8Quant> quant);
  // Owning F32 tensor that takes `values` (NumElements(shape) of them; checked).
  static Tensor FromF32(Shape shape, std::vector<float> values);

  // Converts F32/F16/BF16/Q8_0/I32/I8 contents to a new owning F32 tensor of the same shape
  // (exact). A quantized I8 weight (int8_quant() set) is refused: its values mean nothing
  // without the int8 arithmetic (docs/design/w8a8.md).
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
  std::shared_ptr<const Int8Quant> int8_quant_;
};

// Whether rows quantized as `a` and rows quantized as `b` (null = unquantized) can be stacked
// into one matmul: both unquantized, or the same activation scheme with the same static
// input_scale / input_offset, both with or both without a row_bias.
bool SameInt8Scheme(const Int8Quant* a, const Int8Quant* b);

// Rows of t counted over every axis but the last (1 for a vector).
int64_t NumRows(const Tensor& t);

// Rows of a 2-d or higher tensor, counted over the outermost axis: [rows, inner...].
// ConcatRows: the tensors' rows one after the other (same inner shape; checked), as an owning
// tensor [Σ rows, inner...] in their dtype — or F32 when their dtypes differ (a checkpoint
// mixing e.g. BF16 q with F32 k). Works on bytes, so for every dtype. Int8 side cars are
// concatenated (every part quantized with the same scheme and static parameters, or none: checked).
Tensor ConcatRows(const std::vector<const Tensor*>& parts);
// out row i = t row src_row[i] (an owning tensor with src_row.size() rows; an int8 side car's
// per-row entries move with their rows).
Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& src_row);
// Columns [first, first + count) of the last axis of t (an owning tensor; for a block dtype
// first and count must be whole blocks: checked). An int8 side car keeps its per-row scales;
// its row_bias stays only on the slice that starts at column 0.
Tensor SliceColumns(const Tensor& t, int64_t first, int64_t count);

}  // namespace tandem::tensor
