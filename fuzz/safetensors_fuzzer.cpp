// Fuzzes model::SafetensorsReader::Open (the u64 header length, the JSON header, dtypes, shapes,
// offsets) on arbitrary bytes, then Bytes and ReadF32 of every tensor.
// Invariants beyond "no crash, no UB, no leak": an opened file's tensors lie inside its data
// (8 + header length ≤ begin ≤ end ≤ file size, relative offsets), never overlap, and Bytes
// points at exactly those bytes of the file.
// Seeds: small files fuzz/make_seeds.py cuts out of ../shared's model.safetensors.
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "model/loader/safetensors_reader.h"

using tandem::model::SafetensorsReader;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tandem::fuzz::MemFile file;
  auto reader = SafetensorsReader::Open(file.Write(data, size));
  if (!reader.ok()) return 0;
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, data, sizeof(header_bytes));  // Open checked size >= 8
  const uint64_t data_start = 8 + header_bytes;
  uint64_t covered = 0;
  for (const auto& [name, t] : (*reader)->tensors()) {
    if (t.begin > t.end || data_start > size || t.end > size - data_start) {
      tandem::fuzz::Fail("tensor '" + name + "' lies outside the data");
    }
    covered += t.end - t.begin;
    auto bytes = (*reader)->Bytes(name);
    if (!bytes.ok()) tandem::fuzz::Fail("Bytes('" + name + "') failed on a listed tensor");
    if (t.end > t.begin &&
        std::memcmp(bytes->data, data + data_start + t.begin, t.end - t.begin) != 0) {
      tandem::fuzz::Fail("Bytes('" + name + "') is not the file's bytes");
    }
    if (t.end - t.begin <= (1u << 18)) (void)(*reader)->ReadF32(name);
  }
  if (covered > size - data_start) tandem::fuzz::Fail("tensors overlap");
  return 0;
}
