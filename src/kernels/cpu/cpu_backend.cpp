// The CPU backend: host memory, and a "stream" that has already run every op by the time the
// call returns (ops run on the calling thread and its OpenMP team), so Synchronize, events and
// waits have nothing to do. Edge copies are memcpy (or nothing, when both sides are the same).
#include <cstdlib>
#include <cstring>

#include "kernels/backend.h"

namespace tandem::kernels {
namespace {

class CpuAllocator : public tensor::DeviceAllocator {
 public:
  tensor::Device device() const override { return {}; }
  void* Allocate(size_t bytes, size_t alignment) override {
    const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  }
  void Free(void* ptr, size_t /*bytes*/) override { std::free(ptr); }
};

class CpuEvent : public Event {
 public:
  void Synchronize() override {}
};

class CpuStream : public Stream {
 public:
  const tensor::Device& device() const override { return device_; }
  void Synchronize() override {}
  void Record(Event& /*event*/) override {}
  void Wait(Event& /*event*/) override {}

 private:
  tensor::Device device_;
};

void CheckCpuView(const tensor::TensorView& view, size_t bytes, const char* what) {
  TANDEM_CHECK(view.device.kind == tensor::DeviceKind::kCpu)
      << what << ": a view on " << tensor::DeviceName(view.device) << " given to the CPU backend";
  TANDEM_CHECK(bytes <= view.size_bytes())
      << what << ": " << bytes << " bytes into a view of " << view.size_bytes();
}

class CpuBackendImpl : public Backend {
 public:
  tensor::Device device() const override { return {}; }
  const char* name() const override { return "cpu"; }
  tensor::DeviceAllocator& allocator() override { return allocator_; }
  std::unique_ptr<Stream> CreateStream() override { return std::make_unique<CpuStream>(); }
  std::unique_ptr<Event> CreateEvent() override { return std::make_unique<CpuEvent>(); }
  void CopyToDevice(const tensor::TensorView& dst, const void* src, size_t bytes,
                    Stream& /*stream*/) override {
    CheckCpuView(dst, bytes, "CopyToDevice");
    if (dst.data != src && bytes > 0) {
      std::memcpy(dst.data, src, bytes);
    }
  }
  void CopyToHost(void* dst, const tensor::TensorView& src, size_t bytes,
                  Stream& /*stream*/) override {
    CheckCpuView(src, bytes, "CopyToHost");
    if (dst != src.data && bytes > 0) {
      std::memcpy(dst, src.data, bytes);
    }
  }

 private:
  CpuAllocator allocator_;
};

}  // namespace

Backend& CpuBackend() {
  static CpuBackendImpl backend;
  return backend;
}

}  // namespace tandem::kernels
