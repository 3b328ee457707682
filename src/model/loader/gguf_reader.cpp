// GGUF parsing and tensor conversion. Layout (gguf.md): magic "GGUF", u32 version, u64
// tensor_count, u64 kv_count, kv pairs, tensor infos, padding to general.alignment, data.
#include "model/loader/gguf_reader.h"

#include <cstring>

#include "tensor/dtype.h"

namespace tandem::model {
namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;

// Bounds-checked little-endian cursor over the mapped file.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& path)
      : data_(data), size_(size), path_(path) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  Status Read(void* out, size_t n, const char* what) {
    if (n > remaining()) {
      return DataLoss("GGUF file '" + path_ + "' is truncated: needs " + std::to_string(n) +
                      " bytes at offset " + std::to_string(pos_) + " for " + what + ", has " +
                      std::to_string(remaining()));
    }
    std::memcpy(out, data_ + pos_, n);
    pos_ += n;
    return Status::Ok();
  }
  template <typename T>
  Status ReadPod(T* out, const char* what) {
    return Read(out, sizeof(T), what);
  }

  Status ReadString(std::string* out, const char* what) {
    uint64_t len = 0;
    TANDEM_RETURN_IF_ERROR(ReadPod(&len, what));
    if (len > remaining()) {
      return DataLoss("GGUF file '" + path_ + "' is truncated: " + what + " of length " +
                      std::to_string(len) + " at offset " + std::to_string(pos_) +
                      " runs past the end (" + std::to_string(remaining()) + " bytes left)");
    }
    out->assign(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return Status::Ok();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& path_;
};

Status ReadValue(Cursor& c, GgufType type, GgufValue* v, int depth, const std::string& key,
                 const std::string& path) {
  v->type = type;
  const char* what = "metadata value";
  switch (type) {
    case GgufType::kU8: {
      uint8_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->i = x;
      v->u = x;
      break;
    }
    case GgufType::kI8: {
      int8_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->i = x;
      break;
    }
    case GgufType::kU16: {
      uint16_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->i = x;
      v->u = x;
      break;
    }
    case GgufType::kI16: {
      int16_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->i = x;
      break;
    }
    case GgufType::kU32: {
      uint32_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->i = x;
      v->u = x;
      break;
    }
    case GgufType::kI32: {
      int32_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->i = x;
      break;
    }
    case GgufType::kU64: {
      uint64_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->u = x;
      v->i = static_cast<int64_t>(x);
      break;
    }
    case GgufType::kI64: {
      int64_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->i = x;
      break;
    }
    case GgufType::kF32: {
      float x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->f = x;
      break;
    }
    case GgufType::kF64: {
      double x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->f = x;
      break;
    }
    case GgufType::kBool: {
      uint8_t x;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&x, what));
      v->b = x != 0;
      break;
    }
    case GgufType::kString:
      TANDEM_RETURN_IF_ERROR(c.ReadString(&v->s, "string value"));
      break;
    case GgufType::kArray: {
      if (depth >= kMaxArrayDepth) {
        return DataLoss("GGUF file '" + path + "': key '" + key + "' nests arrays deeper than " +
                        std::to_string(kMaxArrayDepth));
      }
      uint32_t elem_type = 0;
      uint64_t count = 0;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&elem_type, "array type"));
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&count, "array length"));
      if (elem_type > static_cast<uint32_t>(GgufType::kF64)) {
        return DataLoss("GGUF file '" + path + "': key '" + key + "' has unknown array type " +
                        std::to_string(elem_type));
      }
      // Every element takes at least one byte: a larger count means a corrupt length.
      if (count > c.remaining()) {
        return DataLoss("GGUF file '" + path + "' is truncated: array '" + key + "' claims " +
                        std::to_string(count) + " elements, " + std::to_string(c.remaining()) +
                        " bytes left");
      }
      v->array_type = static_cast<GgufType>(elem_type);
      v->array.resize(count);
      for (uint64_t i = 0; i < count; ++i) {
        TANDEM_RETURN_IF_ERROR(ReadValue(c, v->array_type, &v->array[i], depth + 1, key, path));
      }
      break;
    }
    default:
      return DataLoss("GGUF file '" + path + "': key '" + key + "' has unknown value type " +
                      std::to_string(static_cast<uint32_t>(type)));
  }
  return Status::Ok();
}

// Bytes of a tensor of `numel` elements of `type`; 0 for an unsupported type.
uint64_t TensorBytes(uint32_t type, uint64_t numel) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
      return numel * 4;
    case GgmlType::kF16:
      return numel * 2;
    case GgmlType::kBF16:
      return numel * 2;
    case GgmlType::kQ8_0:
      return numel / 32 * 34;  // block: f16 scale + 32 int8
  }
  return 0;
}

}  // namespace

Result<std::unique_ptr<GgufReader>> GgufReader::Open(const std::string& path) {
  TANDEM_ASSIGN_OR_RETURN(auto file, tensor::MmapFile::Open(path));
  std::unique_ptr<GgufReader> reader(new GgufReader());
  reader->file_ = std::move(file);
  TANDEM_RETURN_IF_ERROR(reader->Parse());
  return reader;
}

Status GgufReader::Parse() {
  const std::string& p = file_->path();
  Cursor c(file_->data(), file_->size(), p);
  uint32_t magic = 0;
  TANDEM_RETURN_IF_ERROR(c.ReadPod(&magic, "magic"));
  if (magic != kGgufMagic) {
    return DataLoss("'" + p + "' is not a GGUF file (bad magic; expected 'GGUF')");
  }
  TANDEM_RETURN_IF_ERROR(c.ReadPod(&version_, "version"));
  if (version_ != 2 && version_ != 3) {
    return InvalidArgument("GGUF file '" + p + "' has version " + std::to_string(version_) +
                           "; supported: 2, 3");
  }
  uint64_t tensor_count = 0, kv_count = 0;
  TANDEM_RETURN_IF_ERROR(c.ReadPod(&tensor_count, "tensor count"));
  TANDEM_RETURN_IF_ERROR(c.ReadPod(&kv_count, "metadata count"));
  if (kv_count > c.remaining() || tensor_count > c.remaining()) {
    return DataLoss("GGUF file '" + p + "' is truncated or corrupt: claims " +
                    std::to_string(kv_count) + " metadata pairs and " +
                    std::to_string(tensor_count) + " tensors in " + std::to_string(c.remaining()) +
                    " bytes");
  }
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    uint32_t type = 0;
    TANDEM_RETURN_IF_ERROR(c.ReadString(&key, "metadata key"));
    TANDEM_RETURN_IF_ERROR(c.ReadPod(&type, "metadata type"));
    GgufValue value;
    TANDEM_RETURN_IF_ERROR(ReadValue(c, static_cast<GgufType>(type), &value, 0, key, p));
    metadata_[key] = std::move(value);
  }
  TANDEM_ASSIGN_OR_RETURN(alignment_, GetIntOr("general.alignment", 32));
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
    return DataLoss("GGUF file '" + p + "': general.alignment " + std::to_string(alignment_) +
                    " is not a power of two");
  }
  tensors_.resize(tensor_count);
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensorInfo& t = tensors_[i];
    TANDEM_RETURN_IF_ERROR(c.ReadString(&t.name, "tensor name"));
    uint32_t n_dims = 0;
    TANDEM_RETURN_IF_ERROR(c.ReadPod(&n_dims, "tensor dims"));
    if (n_dims == 0 || n_dims > kMaxDims) {
      return DataLoss("GGUF file '" + p + "': tensor '" + t.name + "' has " +
                      std::to_string(n_dims) + " dims (expected 1.." + std::to_string(kMaxDims) +
                      ")");
    }
    uint64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = 0;
      TANDEM_RETURN_IF_ERROR(c.ReadPod(&ne, "tensor dim"));
      if (ne == 0 || ne > (1ull << 40) || numel > (1ull << 40) / ne) {
        return DataLoss("GGUF file '" + p + "': tensor '" + t.name + "' has a bad dim " +
                        std::to_string(ne));
      }
      numel *= ne;
      t.ne.push_back(static_cast<int64_t>(ne));
    }
    TANDEM_RETURN_IF_ERROR(c.ReadPod(&t.type, "tensor type"));
    TANDEM_RETURN_IF_ERROR(c.ReadPod(&t.offset, "tensor offset"));
    t.size_bytes = TensorBytes(t.type, numel);
    if (t.size_bytes == 0) {
      return InvalidArgument("GGUF file '" + p + "': tensor '" + t.name + "' has ggml type " +
                             std::to_string(t.type) +
                             ", unsupported (F32=0, F16=1, Q8_0=8, BF16=30)");
    }
    if (static_cast<GgmlType>(t.type) == GgmlType::kQ8_0 && t.ne[0] % 32 != 0) {
      return DataLoss("GGUF file '" + p + "': Q8_0 tensor '" + t.name + "' row length " +
                      std::to_string(t.ne[0]) + " is not a multiple of 32");
    }
    if (tensor_index_.count(t.name) > 0) {
      return DataLoss("GGUF file '" + p + "': tensor '" + t.name + "' appears twice");
    }
    tensor_index_[t.name] = i;
  }
  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  for (const GgufTensorInfo& t : tensors_) {
    const uint64_t size = file_->size();
    if (data_offset_ > size || t.offset > size - data_offset_ ||
        t.size_bytes > size - data_offset_ - t.offset) {
      return DataLoss("GGUF file '" + p + "': tensor '" + t.name + "' bytes [" +
                      std::to_string(data_offset_ + t.offset) + ", " +
                      std::to_string(data_offset_ + t.offset + t.size_bytes) +
                      ") lie outside the file of " + std::to_string(size) +
                      " bytes (truncated or corrupt)");
    }
  }
  return Status::Ok();
}

const GgufTensorInfo* GgufReader::FindTensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<tensor::Shape> GgufReader::TensorShape(const std::string& name) const {
  const GgufTensorInfo* t = FindTensor(name);
  if (t == nullptr)
    return InvalidArgument("tensor '" + name + "' not in GGUF file '" + path() + "'");
  return tensor::Shape(t->ne.rbegin(), t->ne.rend());
}

Result<tensor::Tensor> GgufReader::TensorView(const std::string& name) const {
  const GgufTensorInfo* t = FindTensor(name);
  if (t == nullptr)
    return InvalidArgument("tensor '" + name + "' not in GGUF file '" + path() + "'");
  tensor::Shape shape(t->ne.rbegin(), t->ne.rend());
  const uint8_t* bytes = file_->data() + data_offset_ + t->offset;
  switch (static_cast<GgmlType>(t->type)) {
    case GgmlType::kF32:
      return tensor::Tensor::View(shape, tensor::DType::kF32, bytes);
    case GgmlType::kF16:
      return tensor::Tensor::View(shape, tensor::DType::kF16, bytes);
    case GgmlType::kBF16:
      return tensor::Tensor::View(shape, tensor::DType::kBF16, bytes);
    case GgmlType::kQ8_0:  // Parse() checked that rows are whole blocks of 32
      return tensor::Tensor::View(shape, tensor::DType::kQ8_0, bytes);
  }
  return Unimplemented("tensor '" + name + "' has unsupported ggml type " +
                       std::to_string(t->type));
}

Result<tensor::Tensor> GgufReader::ReadStored(const std::string& name) const {
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor view, TensorView(name));
  return view.Clone();
}

Result<tensor::Tensor> GgufReader::ReadF32(const std::string& name) const {
  TANDEM_ASSIGN_OR_RETURN(tensor::Tensor view, TensorView(name));
  return view.ToF32();
}

}  // namespace tandem::model
