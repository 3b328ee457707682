// Device: where memory lives and ops run (docs/design/device-seam.md §1): the host CPU, a CUDA
// GPU, an Ascend NPU. Named by what it is, not by one vendor's runtime.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace tandem::tensor {

enum class DeviceKind { kCpu, kCuda, kNpu };

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int32_t index = 0;  // which device of its kind (always 0 for the CPU)

  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// "cpu", "cuda", "npu".
const char* DeviceKindName(DeviceKind kind);
// "cpu", "cuda:0", "npu:3".
std::string DeviceName(const Device& device);

// What `--device` asked for (vLLM's spelling): auto | cpu | cuda. auto picks cuda when the
// binary was built with CUDA and a GPU is visible, else cpu (kernels/backend_registry.h
// resolves it). Errors: kInvalidArgument naming the value and the choices.
enum class DeviceRequest { kAuto, kCpu, kCuda };
Result<DeviceRequest> ParseDeviceFlag(const std::string& value);
const char* DeviceRequestName(DeviceRequest request);

}  // namespace tandem::tensor
