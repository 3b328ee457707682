#include "worker/kv_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "core/check.h"
#include "core/logging.h"

namespace tandem::worker {
namespace {

// Value in kB of the line "<key>: <n> kB" of a /proc file, in bytes; nullopt if absent.
std::optional<size_t> ReadProcKbField(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream fields(line.substr(key.size() + 1));
      size_t kb = 0;
      if (fields >> kb) {
        return kb * 1024;
      }
    }
  }
  return std::nullopt;
}

// A cgroup limit file holds a byte count, or "max" (v2) / a huge number (v1) for none.
std::optional<size_t> ReadLimitFile(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") {
    return std::nullopt;
  }
  try {
    const unsigned long long bytes = std::stoull(text);
    if (bytes >= (1ull << 60)) {
      return std::nullopt;  // v1's "unlimited"
    }
    return static_cast<size_t>(bytes);
  } catch (...) {  // not a number: treat as no limit (nothing to parse across a boundary)
    return std::nullopt;
  }
}

// This process's cgroup v2 path from /proc/self/cgroup ("0::/some/path"), or "".
std::string CgroupV2Path() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) {
      return line.substr(3);
    }
  }
  return "";
}

std::optional<size_t> ReadCgroupLimitBytes() {
  const std::string v2_path = CgroupV2Path();
  if (!v2_path.empty() && v2_path != "/") {
    if (auto limit = ReadLimitFile("/sys/fs/cgroup" + v2_path + "/memory.max")) {
      return limit;
    }
  }
  if (auto limit = ReadLimitFile("/sys/fs/cgroup/memory.max")) {
    return limit;
  }
  return ReadLimitFile("/sys/fs/cgroup/memory/memory.limit_in_bytes");
}

}  // namespace

size_t ReadUsableMemoryBytes() {
  size_t usable = std::numeric_limits<size_t>::max();
  const std::optional<size_t> available = ReadProcKbField("/proc/meminfo", "MemAvailable");
  if (available) {
    usable = *available + ReadProcKbField("/proc/self/status", "VmRSS").value_or(0);
  }
  if (auto limit = ReadCgroupLimitBytes()) {
    usable = std::min(usable, *limit);
  }
  TANDEM_CHECK(usable != std::numeric_limits<size_t>::max())
      << "cannot tell how much memory this process may use: /proc/meminfo has no MemAvailable "
         "and no cgroup limit was found; pass --kv-cache-memory-bytes";
  return usable;
}

std::optional<size_t> ReadAddressSpaceRoomBytes() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return std::nullopt;
  }
  const size_t mapped = ReadProcKbField("/proc/self/status", "VmSize").value_or(0);
  return limit.rlim_cur > mapped ? static_cast<size_t>(limit.rlim_cur) - mapped : 0;
}

int32_t NumKvBlocksForBudget(const model::CacheGroups& groups, int32_t block_size,
                             size_t weight_bytes, double memory_utilization,
                             std::optional<size_t> kv_cache_memory_bytes,
                             size_t usable_memory_bytes,
                             std::optional<size_t> address_space_room_bytes) {
  const size_t bytes_per_block = model::BytesPerBlock(groups, block_size);
  TANDEM_CHECK(bytes_per_block > 0)
      << "cache groups with zero bytes per KV block ("
      << model::NumLayersOf(groups, model::CacheGroupKind::kPagedKv) << " paged layers)";
  size_t kv_bytes = 0;
  if (kv_cache_memory_bytes) {
    kv_bytes = *kv_cache_memory_bytes;
  } else {
    const auto share =
        static_cast<size_t>(memory_utilization * static_cast<double>(usable_memory_bytes));
    const size_t reserved = weight_bytes + kActivationReserveBytes;
    kv_bytes = share > reserved ? share - reserved : 0;
    if (address_space_room_bytes) {
      const size_t room = *address_space_room_bytes;
      kv_bytes = std::min(
          kv_bytes, room > kActivationReserveBytes ? room - kActivationReserveBytes : size_t{0});
    }
  }
  const size_t num_blocks = kv_bytes / bytes_per_block;
  return static_cast<int32_t>(std::min<size_t>(num_blocks, std::numeric_limits<int32_t>::max()));
}

int32_t ComputeNumKvBlocks(const model::CacheGroups& groups, int32_t block_size,
                           size_t weight_bytes, double memory_utilization,
                           std::optional<size_t> kv_cache_memory_bytes) {
  const size_t usable = kv_cache_memory_bytes ? 0 : ReadUsableMemoryBytes();
  const std::optional<size_t> room = ReadAddressSpaceRoomBytes();
  const int32_t num_blocks = NumKvBlocksForBudget(
      groups, block_size, weight_bytes, memory_utilization, kv_cache_memory_bytes, usable, room);
  if (room && !kv_cache_memory_bytes &&
      num_blocks < NumKvBlocksForBudget(groups, block_size, weight_bytes, memory_utilization,
                                        std::nullopt, usable)) {
    TLOG_WARN(
        "KV cache budget cut to {} blocks: the address-space limit (ulimit -v) leaves {} bytes "
        "to map",
        num_blocks, *room);
  }
  return num_blocks;
}

}  // namespace tandem::worker
