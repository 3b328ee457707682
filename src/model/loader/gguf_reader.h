// GgufReader: parses a GGUF v2/v3 file (metadata + tensor infos) over an mmap and converts
// tensors to f32 on request. Reference: ggml/docs/gguf.md (llama.cpp), gguf-py/gguf/constants.py.
// Every length, count and offset is bounds-checked against the file: a corrupt or truncated file
// gives kDataLoss naming the file (and tensor), never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/loader/weight_source.h"
#include "tensor/mmap_file.h"

namespace tandem::model {

// GGUF metadata value types (gguf.md: gguf_metadata_value_type).
enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// GGML tensor types this reader converts (ggml.h: ggml_type).
enum class GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30 };

// One metadata value. Integers live in `i` (signed) / `u` (unsigned, for u64), floats in `f`.
struct GgufValue {
  GgufType type = GgufType::kU8;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0.0;
  bool b = false;
  std::string s;
  GgufType array_type = GgufType::kU8;  // element type when type == kArray
  std::vector<GgufValue> array;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // ggml dims, innermost first (ne[0] = row length)
  uint32_t type = 0;        // GgmlType value (unknown types are rejected at Open)
  uint64_t offset = 0;      // relative to the tensor data start
  uint64_t size_bytes = 0;
};

class GgufReader : public WeightSource {
 public:
  // Maps and parses `path`. Errors: kNotFound (no file), kDataLoss (bad magic, truncated,
  // tensor outside the file), kInvalidArgument (unsupported version or tensor type).
  static Result<std::unique_ptr<GgufReader>> Open(const std::string& path);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const std::string& path() const { return file_->path(); }

  // ---- metadata ----
  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
  bool Has(const std::string& key) const { return metadata_.count(key) > 0; }
  // Typed getters. Errors: kNotFound (no key), kInvalidArgument (other type).
  Result<std::string> GetString(const std::string& key) const;
  Result<int64_t> GetInt(const std::string& key) const;   // any integer type
  Result<double> GetFloat(const std::string& key) const;  // f32/f64 (or an integer)
  Result<bool> GetBool(const std::string& key) const;
  Result<std::vector<std::string>> GetStringArray(const std::string& key) const;
  Result<std::vector<float>> GetFloatArray(const std::string& key) const;
  Result<std::vector<int64_t>> GetIntArray(const std::string& key) const;
  // Convenience: the value or `fallback` when the key is absent (still an error on wrong type).
  Result<int64_t> GetIntOr(const std::string& key, int64_t fallback) const;
  Result<double> GetFloatOr(const std::string& key, double fallback) const;

  // ---- tensors ----
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* FindTensor(const std::string& name) const;

  // WeightSource
  const std::string& source_name() const override { return file_->path(); }
  bool HasTensor(const std::string& name) const override { return FindTensor(name) != nullptr; }
  Result<tensor::Shape> TensorShape(const std::string& name) const override;
  Result<tensor::Tensor> ReadF32(const std::string& name) const override;
  // F32/F16/BF16/Q8_0 copied as stored.
  Result<tensor::Tensor> ReadStored(const std::string& name) const override;
  // A non-owning view of tensor `name` over the mapped file, in its stored dtype: valid while
  // this reader lives (a loader's scratch: no copy of a tensor it rearranges anyway).
  Result<tensor::Tensor> TensorView(const std::string& name) const;

 private:
  GgufReader() = default;
  Status Parse();
  Result<const GgufValue*> Lookup(const std::string& key, GgufType type) const;

  std::unique_ptr<tensor::MmapFile> file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace tandem::model
