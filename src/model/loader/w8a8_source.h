// W8A8 checkpoints (docs/design/w8a8.md; formats: ../shared/docs/QWEN35.md §7): a WeightSource
// over a safetensors checkpoint that presents `X.weight` of every int8 Linear as an I8 tensor
// carrying its tensor::Int8Quant (scales, activation scheme), and every FLOAT tensor as stored.
// - msModelSlim ("ascend"): quant_model_description.json maps each tensor name to FLOAT,
//   W8A8_DYNAMIC (weight int8 [out, in], weight_scale [out, 1], weight_offset [out, 1] zeros)
//   or W8A8 static (weight, input_scale [1], input_offset [1], deq_scale [out] int64 bit pattern
//   of an f32 — or f32 —, quant_bias [out] int32).
// - compressed-tensors: config.json quantization_config, format int-quantized, int8 symmetric
//   channel weights (weight int8 + weight_scale [out, 1]) and dynamic symmetric per-token
//   activations; every other scheme is refused naming the field.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "model/loader/safetensors_reader.h"
#include "model/loader/weight_source.h"
#include "tensor/tensor.h"

namespace tandem::model {

enum class QuantFormat { kNone, kAscend, kCompressedTensors };

// The W8A8 format of HF folder `dir`: kAscend when quant_model_description.json exists,
// kCompressedTensors when config.json's quantization_config.quant_method says so, else kNone.
// `requested` is --quantization ("" = detect, "ascend", "compressed-tensors"); a value the
// folder does not match, an unknown value or another quant_method (awq, fp8, gptq, ...) is
// kInvalidArgument naming both.
Result<QuantFormat> DetectQuantFormat(const std::string& dir, const std::string& requested);

class W8A8WeightSource : public WeightSource {
 public:
  // Reads the description (kAscend) or quantization_config (kCompressedTensors) of `dir` and
  // checks every quantized Linear's tensors (presence, dtypes, shapes, zero offsets) before any
  // weight is read. Errors: kInvalidArgument naming the tensor, its type and what was expected.
  static Result<std::unique_ptr<W8A8WeightSource>> Open(const SafetensorsCheckpoint& checkpoint,
                                                        const std::string& dir, QuantFormat format);

  const std::string& source_name() const override { return inner_.source_name(); }
  bool HasTensor(const std::string& name) const override { return inner_.HasTensor(name); }
  Result<tensor::Shape> TensorShape(const std::string& name) const override {
    return inner_.TensorShape(name);
  }
  // kInvalidArgument for the weight of an int8 Linear (its arithmetic is int8).
  Result<tensor::Tensor> ReadF32(const std::string& name) const override;
  // An int8 Linear's `X.weight`: I8 [out, in] with its Int8Quant; anything else as stored.
  Result<tensor::Tensor> ReadStored(const std::string& name) const override;
  // Number of int8 Linears.
  size_t num_int8_linears() const { return linears_.size(); }

 private:
  explicit W8A8WeightSource(const SafetensorsCheckpoint& inner) : inner_(inner) {}
  Status CheckLinear(const std::string& prefix, tensor::Int8Quant::Activation activation,
                     const std::string& type) const;
  Status CheckFusedGroups() const;
  Result<tensor::Tensor> ReadInt8Linear(const std::string& prefix,
                                        tensor::Int8Quant::Activation activation) const;

  const SafetensorsCheckpoint& inner_;
  std::string format_name_;  // where the scheme was declared, for messages
  // Linear prefix ("model.layers.0.self_attn.q_proj") → its activation scheme.
  std::map<std::string, tensor::Int8Quant::Activation> linears_;
};

}  // namespace tandem::model
