// SafetensorsReader: one .safetensors file over an mmap, with its header fully validated at
// Open. SafetensorsCheckpoint: a Hugging Face folder (one file, or shards listed in
// model.safetensors.index.json) behind one WeightSource.
// Format (huggingface/safetensors README): u64 little-endian header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then data;
// offsets are relative to the data start (8 + N).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/loader/weight_source.h"
#include "tensor/mmap_file.h"

namespace tandem::model {

struct SafetensorsTensorInfo {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "I32", ... as in the header
  tensor::Shape shape;
  uint64_t begin = 0;  // byte offsets relative to the data start
  uint64_t end = 0;
};

// A tensor's header entry and its bytes in the mapped file (valid while the reader lives).
struct SafetensorsBytes {
  const SafetensorsTensorInfo* info = nullptr;
  const uint8_t* data = nullptr;  // info->end - info->begin bytes, any alignment
};

class SafetensorsReader : public WeightSource {
 public:
  // Maps and validates `path`: header length within the file (and ≤ 100 MiB), valid JSON,
  // known dtype, shape × dtype size == end − begin, offsets inside the data, no overlaps.
  // Errors: kNotFound (no file), kDataLoss (any violation, naming file and tensor).
  static Result<std::unique_ptr<SafetensorsReader>> Open(const std::string& path);

  const std::map<std::string, SafetensorsTensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  const std::string& source_name() const override { return file_->path(); }
  bool HasTensor(const std::string& name) const override { return tensors_.count(name) > 0; }
  Result<tensor::Shape> TensorShape(const std::string& name) const override;
  // F32/F16/BF16 → f32; other dtypes → kUnimplemented.
  Result<tensor::Tensor> ReadF32(const std::string& name) const override;
  // F32/F16/BF16 copied as stored; other dtypes → kUnimplemented.
  Result<tensor::Tensor> ReadStored(const std::string& name) const override;
  // The raw bytes of `name` in any dtype (int8 weights, int64 scales of W8A8 checkpoints).
  // Errors: kInvalidArgument if absent.
  Result<SafetensorsBytes> Bytes(const std::string& name) const;

 private:
  SafetensorsReader() = default;
  Status Parse();

  std::unique_ptr<tensor::MmapFile> file_;
  uint64_t data_offset_ = 0;
  std::map<std::string, SafetensorsTensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

class SafetensorsCheckpoint : public WeightSource {
 public:
  // Opens `dir`/<stem>.safetensors.index.json and every shard it names, or else
  // `dir`/<stem>.safetensors, for stem "model" (Hugging Face) then "quant_model_weights"
  // (msModelSlim). Errors: kNotFound (none present), kDataLoss (bad index/shard, a tensor
  // listed in the index but absent from its shard).
  static Result<std::unique_ptr<SafetensorsCheckpoint>> Open(const std::string& dir);

  const std::string& source_name() const override { return dir_; }
  bool HasTensor(const std::string& name) const override { return owner_.count(name) > 0; }
  Result<tensor::Shape> TensorShape(const std::string& name) const override;
  Result<tensor::Tensor> ReadF32(const std::string& name) const override;
  Result<tensor::Tensor> ReadStored(const std::string& name) const override;
  // SafetensorsReader::Bytes of the shard holding `name`.
  Result<SafetensorsBytes> Bytes(const std::string& name) const;
  // Every tensor name (sorted).
  std::vector<std::string> TensorNames() const;
  size_t num_shards() const { return shards_.size(); }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<SafetensorsReader>> shards_;
  std::map<std::string, const SafetensorsReader*> owner_;
};

}  // namespace tandem::model
