// How many KV blocks fit in the memory this process may use (CPU).
//
// Budget rule (vLLM's --gpu-memory-utilization, read for CPU memory):
//   usable     = min(MemAvailable (/proc/meminfo) + this process's RSS, cgroup memory limit)
//                — RSS is added back because the weights already loaded count in it and are
//                subtracted explicitly below;
//   kv_bytes   = memory_utilization × usable − weight_bytes − kActivationReserveBytes,
//                at most (address space room − kActivationReserveBytes) under an address-space
//                limit (RLIMIT_AS, `ulimit -v`: room = the soft limit − VmSize), or exactly
//                kv_cache_memory_bytes when given (--kv-cache-memory-bytes; the app refuses one
//                past the room);
//   num_blocks = floor(kv_bytes / BytesPerBlock(groups, block_size)), never more (the pool never
//                exceeds what was asked), 0 when the budget is negative.
// Whether that holds one max-length sequence is the app's check, with its own error message.
// Several engine processes on one machine each read MemAvailable at their own start; start
// them with utilization shares that add up to at most 1.
// Reference: vLLM Worker.determine_available_memory (GPU) and CPUWorker (VLLM_CPU_KVCACHE_SPACE).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "model/kv_cache.h"

namespace tandem::worker {

// Kept back from the KV budget for activations, logits and scratch of one step.
inline constexpr size_t kActivationReserveBytes = size_t{128} << 20;

// Reads /proc/meminfo, /proc/self/status and the cgroup (v2 memory.max, else v1
// memory.limit_in_bytes) and returns `usable` as above, in bytes. A file it cannot read is
// left out of the min (no cgroup → no cgroup limit). Thread: any.
size_t ReadUsableMemoryBytes();

// How many more bytes this process may map under its address-space limit (RLIMIT_AS's soft
// limit minus VmSize of /proc/self/status, 0 when past it); nullopt when there is no limit.
// Thread: any.
std::optional<size_t> ReadAddressSpaceRoomBytes();

// The pure rule above for a given `usable_memory_bytes` and `address_space_room_bytes`
// (nullopt: no address-space limit). memory_utilization in (0, 1].
int32_t NumKvBlocksForBudget(const model::CacheGroups& groups, int32_t block_size,
                             size_t weight_bytes, double memory_utilization,
                             std::optional<size_t> kv_cache_memory_bytes,
                             size_t usable_memory_bytes,
                             std::optional<size_t> address_space_room_bytes = std::nullopt);

// NumKvBlocksForBudget with ReadUsableMemoryBytes() (not read when kv_cache_memory_bytes is
// given) and ReadAddressSpaceRoomBytes() (a budget it cuts is logged). Thread: any; call once
// at start, after the weights are loaded.
int32_t ComputeNumKvBlocks(const model::CacheGroups& groups, int32_t block_size,
                           size_t weight_bytes, double memory_utilization,
                           std::optional<size_t> kv_cache_memory_bytes);

}  // namespace tandem::worker
