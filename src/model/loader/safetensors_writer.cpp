#include "model/loader/safetensors_writer.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tandem::model {
namespace {

Status WriteShard(const std::string& path, const std::vector<TensorToWrite>& tensors,
                  const std::vector<size_t>& members,
                  const std::function<void(size_t)>& on_written) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (size_t i : members) {
    const TensorToWrite& t = tensors[i];
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');  // the data starts 8-byte aligned
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Internal("cannot create '" + path + "': " + std::strerror(errno));
  const uint64_t n = text.size();
  unsigned char len[8];
  for (int b = 0; b < 8; ++b) len[b] = static_cast<unsigned char>(n >> (8 * b));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (size_t i : members) {
    const TensorToWrite& t = tensors[i];
    TANDEM_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, t.produce());
    if (bytes.size() != t.bytes) {
      return Internal("tensor '" + t.name + "': produced " + std::to_string(bytes.size()) +
                      " bytes for " + std::to_string(t.bytes));
    }
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) return Internal("writing '" + path + "' failed (disk full?)");
    if (on_written) on_written(i);
  }
  out.close();
  if (!out) return Internal("closing '" + path + "' failed");
  return Status::Ok();
}

}  // namespace

Status WriteSafetensors(const std::string& dir, const std::string& stem,
                        const std::vector<TensorToWrite>& tensors, uint64_t max_shard_bytes,
                        const std::function<void(size_t)>& on_written) {
  std::vector<std::vector<size_t>> shards(1);
  uint64_t in_shard = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (in_shard > 0 && in_shard + tensors[i].bytes > max_shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(i);
    in_shard += tensors[i].bytes;
  }
  const std::filesystem::path base(dir);
  if (shards.size() == 1) {
    return WriteShard((base / (stem + ".safetensors")).string(), tensors, shards[0], on_written);
  }
  nlohmann::ordered_json index;
  uint64_t total = 0;
  for (const TensorToWrite& t : tensors) total += t.bytes;
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = nlohmann::ordered_json::object();
  for (size_t s = 0; s < shards.size(); ++s) {
    char name[64];
    std::snprintf(name, sizeof(name), "-%05zu-of-%05zu.safetensors", s + 1, shards.size());
    const std::string file = stem + name;
    TANDEM_RETURN_IF_ERROR(WriteShard((base / file).string(), tensors, shards[s], on_written));
    for (size_t i : shards[s]) index["weight_map"][tensors[i].name] = file;
  }
  const std::string index_path = (base / (stem + ".safetensors.index.json")).string();
  std::ofstream out(index_path, std::ios::trunc);
  out << index.dump(2) << "\n";
  if (!out) return Internal("writing '" + index_path + "' failed");
  return Status::Ok();
}

}  // namespace tandem::model
