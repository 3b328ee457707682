#include "tensor/tensor.h"

#include <algorithm>
#include <cstring>

#include "tensor/huge_pages.h"

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
  TANDEM_CHECK(DTypeBlockValues(dtype_) == 1 ||
               (!shape_.empty() && shape_.back() % DTypeBlockValues(dtype_) == 0))
      << DTypeName(dtype_) << " tensor " << ShapeToString(shape_) << ": the last axis must be "
      << "whole blocks of " << DTypeBlockValues(dtype_);
  const size_t bytes = DTypeBytes(dtype_, NumElements(shape_));
  ResizeOnHugePages(owned_, (bytes + sizeof(float) - 1) / sizeof(float));  // zeros
}

Tensor Tensor::View(Shape shape, DType dtype, const void* data) {
  TANDEM_CHECK(DTypeBlockValues(dtype) == 1 ||
               (!shape.empty() && shape.back() % DTypeBlockValues(dtype) == 0))
      << DTypeName(dtype) << " view " << ShapeToString(shape) << ": the last axis must be "
      << "whole blocks of " << DTypeBlockValues(dtype);
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.view_ = data;
  return t;
}

Tensor Tensor::FromF32(Shape shape, std::vector<float> values) {
  TANDEM_CHECK(static_cast<int64_t>(values.size()) == NumElements(shape))
      << values.size() << " values for shape " << ShapeToString(shape);
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = DType::kF32;
  t.owned_ = std::move(values);
  return t;
}

bool SameInt8Scheme(const Int8Quant* a, const Int8Quant* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->activation == b->activation && a->input_scale == b->input_scale &&
         a->input_offset == b->input_offset && a->row_bias.empty() == b->row_bias.empty();
}

int64_t NumRows(const Tensor& t) {
  if (t.rank() == 0) return 1;
  return t.shape().back() == 0 ? 0 : t.numel() / t.shape().back();
}

void Tensor::set_int8_quant(std::shared_ptr<const Int8Quant> quant) {
  TANDEM_CHECK(dtype_ == DType::kI8 && rank() >= 1)
      << "an int8 side car needs an I8 tensor; this one is " << DTypeName(dtype_) << " "
      << ShapeToString(shape_);
  if (quant != nullptr) {
    const auto rows = static_cast<size_t>(NumRows(*this));
    TANDEM_CHECK(quant->row_scale.size() == rows &&
                 (quant->row_bias.empty() || quant->row_bias.size() == rows))
        << "int8 side car has " << quant->row_scale.size() << " scales and "
        << quant->row_bias.size() << " biases for " << rows << " rows";
  }
  int8_quant_ = std::move(quant);
}

Tensor Tensor::Clone() const {
  Tensor out(shape_, dtype_);
  if (size_bytes() > 0) std::memcpy(out.mutable_raw(), raw(), size_bytes());
  out.int8_quant_ = int8_quant_;
  return out;
}

Tensor Tensor::To(DType dtype) const {
  if (dtype == dtype_) return Clone();
  TANDEM_CHECK(int8_quant_ == nullptr)
      << "cannot convert a " << int8_quant_->name() << " int8 weight to " << DTypeName(dtype);
  TANDEM_CHECK(dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16)
      << "cannot convert a tensor to " << DTypeName(dtype);
  Tensor wide = ToF32();
  if (dtype == DType::kF32) return wide;
  Tensor out(shape_, dtype);
  const float* src = wide.f32();
  auto* dst = static_cast<uint16_t*>(out.mutable_raw());
  const int64_t n = numel();
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = dtype == DType::kF16 ? FloatToHalf(src[i]) : FloatToBFloat16(src[i]);
  }
  return out;
}

Tensor Tensor::ToF32() const {
  TANDEM_CHECK(int8_quant_ == nullptr)
      << "cannot widen a " << int8_quant_->name() << " int8 weight to f32 (its arithmetic is "
      << "int8: docs/design/w8a8.md)";
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
    case DType::kQ8_0: {
      // Reference: ggml-quants.c dequantize_row_q8_0: x = d * q, d f16, 32 int8 per block.
      const auto* src = static_cast<const unsigned char*>(raw());
      for (int64_t b = 0; b < n / 32; ++b) {
        const unsigned char* block = src + b * 34;
        uint16_t d_bits;
        std::memcpy(&d_bits, block, 2);
        const float d = HalfToFloat(d_bits);
        for (int j = 0; j < 32; ++j) dst[b * 32 + j] = d * static_cast<int8_t>(block[2 + j]);
      }
      break;
    }
    case DType::kI8: {
      const auto* src = static_cast<const int8_t*>(raw());
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
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
  TANDEM_CHECK(int8_quant_ == nullptr || (!shape.empty() && shape.back() == shape_.back()))
      << "reshape " << ShapeToString(shape_) << " -> " << ShapeToString(shape)
      << " would move the rows of an int8 weight's scales";
  shape_ = std::move(shape);
}

namespace {
// Bytes of one row (outermost index) of t.
size_t RowBytes(const Tensor& t) {
  TANDEM_CHECK(t.rank() >= 1) << "row operation on a scalar tensor";
  return t.dim(0) == 0 ? 0 : t.size_bytes() / static_cast<size_t>(t.dim(0));
}
}  // namespace

Tensor ConcatRows(const std::vector<const Tensor*>& parts) {
  TANDEM_CHECK(!parts.empty()) << "ConcatRows of nothing";
  const Tensor& first = *parts.front();
  Shape shape = first.shape();
  TANDEM_CHECK(!shape.empty()) << "ConcatRows of a scalar tensor";
  shape[0] = 0;
  const bool quantized = first.int8_quant() != nullptr;
  for (const Tensor* p : parts) {
    TANDEM_CHECK((p->int8_quant() != nullptr) == quantized)
        << "ConcatRows: cannot fuse an int8-quantized weight with an unquantized one (all parts of "
        << "a fused Linear must share one quantization type)";
    if (quantized) {
      const Int8Quant& a = *first.int8_quant();
      const Int8Quant& b = *p->int8_quant();
      TANDEM_CHECK(SameInt8Scheme(&a, &b))
          << "ConcatRows: the parts of a fused int8 Linear differ in their activation "
          << "quantization (" << a.name() << " scale " << a.input_scale << " offset "
          << a.input_offset << " vs " << b.name() << " scale " << b.input_scale << " offset "
          << b.input_offset << ")";
    }
    if (p->dtype() != first.dtype()) {
      std::vector<Tensor> wide;
      wide.reserve(parts.size());
      for (const Tensor* q : parts) wide.push_back(q->ToF32());
      std::vector<const Tensor*> wide_parts;
      for (const Tensor& q : wide) wide_parts.push_back(&q);
      return ConcatRows(wide_parts);
    }
  }
  for (const Tensor* p : parts) {
    TANDEM_CHECK(p->rank() == first.rank() &&
                 std::equal(p->shape().begin() + 1, p->shape().end(), first.shape().begin() + 1))
        << "ConcatRows: " << ShapeToString(p->shape()) << " " << DTypeName(p->dtype())
        << " does not stack on " << ShapeToString(first.shape()) << " " << DTypeName(first.dtype());
    shape[0] += p->dim(0);
  }
  Tensor out(shape, first.dtype());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  for (const Tensor* p : parts) {
    if (p->size_bytes() > 0) std::memcpy(dst, p->raw(), p->size_bytes());
    dst += p->size_bytes();
  }
  if (quantized) {
    auto quant = std::make_shared<Int8Quant>(*first.int8_quant());
    quant->row_scale.clear();
    quant->row_bias.clear();
    for (const Tensor* p : parts) {
      const Int8Quant& q = *p->int8_quant();
      quant->row_scale.insert(quant->row_scale.end(), q.row_scale.begin(), q.row_scale.end());
      quant->row_bias.insert(quant->row_bias.end(), q.row_bias.begin(), q.row_bias.end());
    }
    out.set_int8_quant(std::move(quant));
  }
  return out;
}

Tensor SliceColumns(const Tensor& t, int64_t first, int64_t count) {
  TANDEM_CHECK(t.rank() >= 1 && first >= 0 && count >= 0 && first + count <= t.shape().back())
      << "SliceColumns [" << first << ", " << first + count << ") of " << ShapeToString(t.shape());
  const int64_t block = DTypeBlockValues(t.dtype());
  TANDEM_CHECK(first % block == 0 && count % block == 0)
      << "SliceColumns [" << first << ", " << first + count << ") cuts " << DTypeName(t.dtype())
      << " blocks of " << block;
  Shape shape = t.shape();
  const int64_t width = shape.back();
  shape.back() = count;
  Tensor out(shape, t.dtype());
  const int64_t rows = width == 0 ? 0 : t.numel() / width;
  const auto* src = static_cast<const unsigned char*>(t.raw());
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  const size_t src_row = DTypeBytes(t.dtype(), width), dst_row = DTypeBytes(t.dtype(), count);
  const size_t skip = DTypeBytes(t.dtype(), first);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + r * dst_row, src + r * src_row + skip, dst_row);
  if (t.int8_quant() != nullptr) {
    auto quant = std::make_shared<Int8Quant>(*t.int8_quant());
    if (first != 0) quant->row_bias.clear();  // the bias is added by the slice holding column 0
    out.set_int8_quant(std::move(quant));
  }
  return out;
}

Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& src_row) {
  Shape shape = t.shape();
  TANDEM_CHECK(!shape.empty()) << "GatherRows of a scalar tensor";
  shape[0] = static_cast<int64_t>(src_row.size());
  Tensor out(shape, t.dtype());
  const size_t row = RowBytes(t);
  auto* dst = static_cast<unsigned char*>(out.mutable_raw());
  const auto* src = static_cast<const unsigned char*>(t.raw());
  for (size_t i = 0; i < src_row.size(); ++i) {
    TANDEM_CHECK(src_row[i] >= 0 && src_row[i] < t.dim(0))
        << "GatherRows: row " << src_row[i] << " of " << t.dim(0);
    std::memcpy(dst + i * row, src + src_row[i] * row, row);
  }
  if (t.int8_quant() != nullptr) {
    // Each outer row holds `inner` side-car rows (an expert of a stacked [E, out, in] weight).
    const Int8Quant& in = *t.int8_quant();
    const int64_t inner = t.dim(0) == 0 ? 0 : NumRows(t) / t.dim(0);
    auto quant = std::make_shared<Int8Quant>(in);
    quant->row_scale.clear();
    quant->row_bias.clear();
    for (int64_t r : src_row) {
      quant->row_scale.insert(quant->row_scale.end(), in.row_scale.begin() + r * inner,
                              in.row_scale.begin() + (r + 1) * inner);
      if (!in.row_bias.empty()) {
        quant->row_bias.insert(quant->row_bias.end(), in.row_bias.begin() + r * inner,
                               in.row_bias.begin() + (r + 1) * inner);
      }
    }
    out.set_int8_quant(std::move(quant));
  }
  return out;
}

}  // namespace tandem::tensor
