// WeightSource: where an architecture reads its named weights from (a GGUF file, a safetensors
// checkpoint), so arch/ code is written once for both.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "tensor/tensor.h"

namespace tandem::model {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Where the weights come from, for error messages (a path).
  virtual const std::string& source_name() const = 0;
  virtual bool HasTensor(const std::string& name) const = 0;
  // Row-major shape (outermost first) of tensor `name`. Errors: kInvalidArgument if absent.
  virtual Result<tensor::Shape> TensorShape(const std::string& name) const = 0;
  // Tensor `name` converted to an owning F32 tensor with its row-major shape.
  // Errors: kInvalidArgument (absent), kDataLoss (bytes outside the file), kUnimplemented (type).
  virtual Result<tensor::Tensor> ReadF32(const std::string& name) const = 0;
  // Tensor `name` as an owning tensor in the dtype the file stores it in when a kernel reads
  // that dtype (F32, F16, BF16), else widened to F32 (e.g. GGUF Q8_0): the weights of Linear and
  // Embedding (docs/design/weight-dtypes.md). Errors as ReadF32. Default: ReadF32.
  virtual Result<tensor::Tensor> ReadStored(const std::string& name) const { return ReadF32(name); }
};

// `inner` with ReadStored converted to one dtype: --dtype float32|bfloat16|float16 (vLLM's
// names). f32 → bf16/f16 rounds to nearest even; widening is exact. Everything else delegates.
class CastingWeightSource : public WeightSource {
 public:
  CastingWeightSource(const WeightSource& inner, tensor::DType dtype)
      : inner_(inner), dtype_(dtype) {}
  const std::string& source_name() const override { return inner_.source_name(); }
  bool HasTensor(const std::string& name) const override { return inner_.HasTensor(name); }
  Result<tensor::Shape> TensorShape(const std::string& name) const override {
    return inner_.TensorShape(name);
  }
  Result<tensor::Tensor> ReadF32(const std::string& name) const override {
    return inner_.ReadF32(name);
  }
  Result<tensor::Tensor> ReadStored(const std::string& name) const override;

 private:
  const WeightSource& inner_;
  tensor::DType dtype_;
};

// Reads `name` as ReadStored gives it (its stored dtype) and checks its shape equals `expected`;
// the error names the tensor, the source, the expected and the found shape.
Result<tensor::Tensor> LoadStoredWeight(const WeightSource& source, const std::string& name,
                                        const tensor::Shape& expected);

}  // namespace tandem::model
