// What a machine has: its devices (NVIDIA GPUs from nvidia-smi, Ascend NPUs from npu-smi, else
// CPU sockets; or a fixed list from --devices for tests) and its CPU and memory use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace tandem::cluster::agent {

struct DeviceInfo {
  int64_t index = 0;
  std::string type;    // "cuda", "cann", "cpu"
  std::string vendor;  // "nvidia", "huawei", "cpu"
  std::string name;
  int64_t memory_total = 0;  // bytes
  int64_t memory_used = 0;
  int64_t core_total = 0;  // CPU cores of a socket, SMs unknown (0) for GPUs
  std::vector<int> cpus;   // for "cpu": the logical CPUs of the socket (affinity)

  // As the heartbeat sends it (MANAGER.md §3 gpu-devices fields).
  nlohmann::json ToJson() const;
};

// "--devices cpu:0,cpu:1" (TYPE:INDEX, comma-separated; types cpu, cuda, cann).
// Errors: kInvalidArgument naming the bad entry or a duplicate.
Result<std::vector<DeviceInfo>> ParseDeviceSpec(const std::string& spec);

// The rows of `nvidia-smi --query-gpu=index,name,memory.total,memory.used
// --format=csv,noheader,nounits` (MiB). Malformed rows are skipped.
std::vector<DeviceInfo> ParseNvidiaSmi(const std::string& csv);

// nvidia-smi's GPUs when it runs, else npu-smi's NPUs, else one device per CPU socket.
std::vector<DeviceInfo> DetectDevices();

// CPU and memory of the machine, sampled from /proc.
class HostStatus {
 public:
  // {"cpu": {"total", "utilization_rate"}, "memory": {"total", "used"}}; the utilization is
  // over the time since the previous call (0 on the first).
  nlohmann::json Sample();

 private:
  uint64_t last_busy_ = 0;
  uint64_t last_total_ = 0;
};

}  // namespace tandem::cluster::agent
