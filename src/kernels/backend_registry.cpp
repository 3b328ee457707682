// --device → a Backend. This build has the CPU backend only; the CUDA one (kernels/cuda/,
// -DTANDEM_WITH_CUDA=ON) is the next step of docs/design/device-seam.md §8.
#include <unistd.h>

#include "kernels/backend.h"

namespace tandem::kernels {
namespace {

// An NVIDIA GPU is visible to this process (its device node exists), whatever this build has.
bool NvidiaGpuVisible() { return access("/dev/nvidia0", F_OK) == 0; }

}  // namespace

bool HasCudaBackend() { return false; }

Result<Backend*> BackendFor(tensor::DeviceRequest request) {
  switch (request) {
    case tensor::DeviceRequest::kAuto:
    case tensor::DeviceRequest::kCpu:
      return &CpuBackend();
    case tensor::DeviceRequest::kCuda:
      return InvalidArgument(
          std::string("--device cuda: this tandem has no CUDA backend yet (docs/design/"
                      "device-seam.md)") +
          (NvidiaGpuVisible() ? ", although a GPU is visible (/dev/nvidia0)"
                              : ", and no NVIDIA GPU is visible here") +
          "; use --device cpu or auto");
  }
  return InvalidArgument("--device: unknown request");
}

}  // namespace tandem::kernels
