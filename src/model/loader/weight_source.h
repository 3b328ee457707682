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
};

// Reads `name` and checks its shape equals `expected`; the error names the tensor, the source,
// the expected and the found shape. Returns the f32 values, row-major.
Result<std::vector<float>> LoadWeight(const WeightSource& source, const std::string& name,
                                      const tensor::Shape& expected);

}  // namespace tandem::model
