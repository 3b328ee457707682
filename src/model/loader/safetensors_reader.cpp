#include "model/loader/safetensors_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/regular_file.h"

namespace tandem::model {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

// Element size of a safetensors dtype; 0 = unknown.
uint64_t DTypeBytes(const std::string& dtype) {
  static const std::map<std::string, uint64_t> kSizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},     {"I32", 4},
      {"I16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

}  // namespace

Result<std::unique_ptr<SafetensorsReader>> SafetensorsReader::Open(const std::string& path) {
  TANDEM_ASSIGN_OR_RETURN(auto file, tensor::MmapFile::Open(path));
  std::unique_ptr<SafetensorsReader> reader(new SafetensorsReader());
  reader->file_ = std::move(file);
  TANDEM_RETURN_IF_ERROR(reader->Parse());
  return reader;
}

Status SafetensorsReader::Parse() {
  const std::string& p = file_->path();
  const uint64_t size = file_->size();
  if (size < 8) {
    return DataLoss("safetensors file '" + p + "' is truncated: " + std::to_string(size) +
                    " bytes, less than the 8-byte header length");
  }
  uint64_t header_len = 0;
  std::memcpy(&header_len, file_->data(), 8);
  if (header_len > size - 8 || header_len > kMaxHeaderBytes) {
    return DataLoss("safetensors file '" + p + "': header length " + std::to_string(header_len) +
                    " exceeds the file (" + std::to_string(size) + " bytes) or 100 MiB");
  }
  data_offset_ = 8 + header_len;
  const uint64_t data_size = size - data_offset_;
  nlohmann::json header = nlohmann::json::parse(file_->data() + 8, file_->data() + 8 + header_len,
                                                nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return DataLoss("safetensors file '" + p + "': header is not a JSON object");
  }
  std::vector<const SafetensorsTensorInfo*> by_offset;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (it->is_object()) {
        for (auto m = it->begin(); m != it->end(); ++m) {
          if (m->is_string()) metadata_[m.key()] = m->get<std::string>();
        }
      }
      continue;
    }
    const nlohmann::json& e = it.value();
    const std::string where = "safetensors file '" + p + "': tensor '" + name + "' ";
    if (!e.is_object() || !e.contains("dtype") || !e["dtype"].is_string() || !e.contains("shape") ||
        !e["shape"].is_array() || !e.contains("data_offsets") || !e["data_offsets"].is_array() ||
        e["data_offsets"].size() != 2) {
      return DataLoss(where + "needs dtype (string), shape (array), data_offsets ([begin, end])");
    }
    SafetensorsTensorInfo info;
    info.name = name;
    info.dtype = e["dtype"].get<std::string>();
    const uint64_t elem = DTypeBytes(info.dtype);
    if (elem == 0) return DataLoss(where + "has unknown dtype '" + info.dtype + "'");
    uint64_t numel = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40)) {
        return DataLoss(where + "has a bad shape " + e["shape"].dump());
      }
      const uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && numel > (1ull << 40) / dim) return DataLoss(where + "is too large");
      numel *= dim;
      info.shape.push_back(static_cast<int64_t>(dim));
    }
    const auto& offs = e["data_offsets"];
    if (!offs[0].is_number_unsigned() || !offs[1].is_number_unsigned()) {
      return DataLoss(where + "has non-integer data_offsets " + offs.dump());
    }
    info.begin = offs[0].get<uint64_t>();
    info.end = offs[1].get<uint64_t>();
    if (info.begin > info.end || info.end > data_size) {
      return DataLoss(where + "data_offsets [" + std::to_string(info.begin) + ", " +
                      std::to_string(info.end) + "] lie outside the data section of " +
                      std::to_string(data_size) + " bytes");
    }
    if (numel * elem != info.end - info.begin) {
      return DataLoss(where + "shape " + tensor::ShapeToString(info.shape) + " × " + info.dtype +
                      " needs " + std::to_string(numel * elem) + " bytes; data_offsets span " +
                      std::to_string(info.end - info.begin));
    }
    by_offset.push_back(&tensors_.emplace(name, std::move(info)).first->second);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->begin < by_offset[i - 1]->end) {
      return DataLoss("safetensors file '" + p + "': tensors '" + by_offset[i - 1]->name +
                      "' and '" + by_offset[i]->name + "' overlap");
    }
  }
  return Status::Ok();
}

Result<tensor::Shape> SafetensorsReader::TensorShape(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return InvalidArgument("tensor '" + name + "' not in '" + source_name() + "'");
  return it->second.shape;
}

Result<tensor::Tensor> SafetensorsReader::ReadStored(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return InvalidArgument("tensor '" + name + "' not in '" + source_name() + "'");
  const SafetensorsTensorInfo& info = it->second;
  const uint8_t* bytes = file_->data() + data_offset_ + info.begin;
  tensor::DType dtype;
  if (info.dtype == "F32") {
    dtype = tensor::DType::kF32;
  } else if (info.dtype == "F16") {
    dtype = tensor::DType::kF16;
  } else if (info.dtype == "BF16") {
    dtype = tensor::DType::kBF16;
  } else {
    return Unimplemented("tensor '" + name + "' in '" + source_name() + "' has dtype " +
                         info.dtype + "; only F32, F16, BF16 are read");
  }
  return tensor::Tensor::View(info.shape, dtype, bytes).Clone();
}

Result<SafetensorsBytes> SafetensorsReader::Bytes(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return InvalidArgument("tensor '" + name + "' not in '" + source_name() + "'");
  return SafetensorsBytes{&it->second, file_->data() + data_offset_ + it->second.begin};
}

Result<tensor::Tensor> SafetensorsReader::ReadF32(const std::string& name) const {
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, ReadStored(name));
  if (t.dtype() == tensor::DType::kF32) return t;
  return t.ToF32();
}

Result<std::unique_ptr<SafetensorsCheckpoint>> SafetensorsCheckpoint::Open(const std::string& dir) {
  namespace fs = std::filesystem;
  auto ckpt = std::make_unique<SafetensorsCheckpoint>();
  ckpt->dir_ = dir;
  std::vector<std::string> stems;
  for (const char* candidate : {"model", "quant_model_weights"}) {
    if (fs::exists(fs::path(dir) / (std::string(candidate) + ".safetensors.index.json")) ||
        fs::exists(fs::path(dir) / (std::string(candidate) + ".safetensors"))) {
      stems.push_back(candidate);
    }
  }
  if (stems.size() > 1) {
    return InvalidArgument("folder '" + dir +
                           "' holds both model.safetensors* and msModelSlim's "
                           "quant_model_weights.safetensors*; keep one checkpoint per folder");
  }
  const std::string stem = stems.empty() ? "model" : stems.front();
  const fs::path index_path = fs::path(dir) / (stem + ".safetensors.index.json");
  std::vector<std::string> files;
  std::map<std::string, std::string> weight_map;
  if (fs::exists(index_path)) {
    TANDEM_ASSIGN_OR_RETURN(const std::string text, ReadRegularFile(index_path.string()));
    nlohmann::json index = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (index.is_discarded() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
      return DataLoss("'" + index_path.string() + "' is not JSON with a \"weight_map\" object");
    }
    for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
      if (!it->is_string())
        return DataLoss("'" + index_path.string() + "': entry '" + it.key() +
                        "' is not a file name");
      const std::string file = it->get<std::string>();
      if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..") {
        return DataLoss("'" + index_path.string() + "': entry '" + it.key() + "' names '" + file +
                        "'; shards are file names inside the folder");
      }
      weight_map[it.key()] = it->get<std::string>();
      if (std::find(files.begin(), files.end(), it->get<std::string>()) == files.end()) {
        files.push_back(it->get<std::string>());
      }
    }
  } else if (fs::exists(fs::path(dir) / (stem + ".safetensors"))) {
    files.push_back(stem + ".safetensors");
  } else {
    return NotFound("folder '" + dir +
                    "' has neither model.safetensors nor "
                    "model.safetensors.index.json (nor msModelSlim's quant_model_weights.*)");
  }
  std::map<std::string, const SafetensorsReader*> by_file;
  for (const std::string& f : files) {
    TANDEM_ASSIGN_OR_RETURN(auto shard, SafetensorsReader::Open((fs::path(dir) / f).string()));
    by_file[f] = shard.get();
    for (const auto& [name, info] : shard->tensors()) ckpt->owner_[name] = shard.get();
    ckpt->shards_.push_back(std::move(shard));
  }
  for (const auto& [name, file] : weight_map) {
    if (!by_file[file]->HasTensor(name)) {
      return DataLoss("index '" + index_path.string() + "' puts tensor '" + name + "' in '" + file +
                      "', which does not hold it");
    }
    ckpt->owner_[name] = by_file[file];
  }
  return ckpt;
}

Result<tensor::Shape> SafetensorsCheckpoint::TensorShape(const std::string& name) const {
  auto it = owner_.find(name);
  if (it == owner_.end())
    return InvalidArgument("tensor '" + name + "' not in checkpoint '" + dir_ + "'");
  return it->second->TensorShape(name);
}

Result<tensor::Tensor> SafetensorsCheckpoint::ReadF32(const std::string& name) const {
  auto it = owner_.find(name);
  if (it == owner_.end())
    return InvalidArgument("tensor '" + name + "' not in checkpoint '" + dir_ + "'");
  return it->second->ReadF32(name);
}

Result<tensor::Tensor> SafetensorsCheckpoint::ReadStored(const std::string& name) const {
  auto it = owner_.find(name);
  if (it == owner_.end())
    return InvalidArgument("tensor '" + name + "' not in checkpoint '" + dir_ + "'");
  return it->second->ReadStored(name);
}

Result<SafetensorsBytes> SafetensorsCheckpoint::Bytes(const std::string& name) const {
  auto it = owner_.find(name);
  if (it == owner_.end())
    return InvalidArgument("tensor '" + name + "' not in checkpoint '" + dir_ + "'");
  return it->second->Bytes(name);
}

std::vector<std::string> SafetensorsCheckpoint::TensorNames() const {
  std::vector<std::string> names;
  names.reserve(owner_.size());
  for (const auto& [name, reader] : owner_) names.push_back(name);
  return names;
}

}  // namespace tandem::model
