#include "tensor/device.h"

namespace tandem::tensor {

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kCuda:
      return "cuda";
    case DeviceKind::kNpu:
      return "npu";
  }
  return "?";
}

std::string DeviceName(const Device& device) {
  if (device.kind == DeviceKind::kCpu) {
    return "cpu";
  }
  return std::string(DeviceKindName(device.kind)) + ":" + std::to_string(device.index);
}

Result<DeviceRequest> ParseDeviceFlag(const std::string& value) {
  if (value == "auto") {
    return DeviceRequest::kAuto;
  }
  if (value == "cpu") {
    return DeviceRequest::kCpu;
  }
  if (value == "cuda") {
    return DeviceRequest::kCuda;
  }
  return InvalidArgument("--device '" + value + "' is not one of auto, cpu, cuda");
}

const char* DeviceRequestName(DeviceRequest request) {
  switch (request) {
    case DeviceRequest::kAuto:
      return "auto";
    case DeviceRequest::kCpu:
      return "cpu";
    case DeviceRequest::kCuda:
      return "cuda";
  }
  return "?";
}

}  // namespace tandem::tensor
