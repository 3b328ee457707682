// Fuzzes model::GgufReader::Open (header, metadata, tensor infos) on arbitrary bytes, then every
// typed getter on every key, LlamaConfigFromGguf, and ReadF32 of every small tensor.
// Invariants beyond "no crash, no UB, no leak": an opened file's tensors lie inside it, after
// the data offset; each tensor's size_bytes is its element count times its type's size;
// ReadF32 gives exactly TensorShape's element count.
// Seeds: small GGUFs fuzz/make_seeds.py writes (with the scalar metadata of ../shared's).
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "model/config/model_config.h"
#include "model/loader/gguf_reader.h"
#include "tensor/tensor.h"

using tandem::model::GgmlType;
using tandem::model::GgufReader;

namespace {

// Bytes of `numel` elements of GGML type `type` (Q8_0: 34-byte blocks of 32); 0 when unknown.
uint64_t ExpectedBytes(uint32_t type, uint64_t numel) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
      return numel * 4;
    case GgmlType::kF16:
    case GgmlType::kBF16:
      return numel * 2;
    case GgmlType::kQ8_0:
      return numel / 32 * 34;
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tandem::fuzz::MemFile file;
  auto reader = GgufReader::Open(file.Write(data, size));
  if (!reader.ok()) return 0;
  const GgufReader& gguf = **reader;
  for (const auto& [key, value] : gguf.metadata()) {
    (void)gguf.GetString(key);
    (void)gguf.GetInt(key);
    (void)gguf.GetFloat(key);
    (void)gguf.GetBool(key);
    (void)gguf.GetStringArray(key);
    (void)gguf.GetFloatArray(key);
    (void)gguf.GetIntArray(key);
  }
  (void)tandem::model::LlamaConfigFromGguf(gguf);
  for (const auto& t : gguf.tensors()) {
    uint64_t numel = 1;
    for (int64_t d : t.ne) numel *= static_cast<uint64_t>(d);
    if (t.size_bytes != ExpectedBytes(t.type, numel)) {
      tandem::fuzz::Fail("tensor '" + t.name + "' size_bytes " + std::to_string(t.size_bytes));
    }
    if (gguf.data_offset() > size || t.offset > size - gguf.data_offset() ||
        t.size_bytes > size - gguf.data_offset() - t.offset) {
      tandem::fuzz::Fail("tensor '" + t.name + "' lies outside the file");
    }
    if (numel > (1u << 16)) continue;  // converting big tensors only slows the fuzzer
    auto shape = gguf.TensorShape(t.name);
    auto f32 = gguf.ReadF32(t.name);
    if (shape.ok() && f32.ok() && f32->numel() != tandem::tensor::NumElements(*shape)) {
      tandem::fuzz::Fail("ReadF32 of '" + t.name + "' has the wrong element count");
    }
  }
  return 0;
}
