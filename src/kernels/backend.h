// Backend: one kind of device behind the device seam (docs/design/device-seam.md §2): its
// allocator, its streams (in-order queues of ops and copies) and events, and the copies at a
// step's edges. The CPU backend (cpu/cpu_backend.cpp) runs every op at once on the calling
// thread; an accelerator's enqueues and returns. Code above the seam reads device results on
// the host only after CopyToHost and Stream::Synchronize.
#pragma once

#include <cstddef>
#include <memory>

#include "core/status.h"
#include "tensor/device.h"
#include "tensor/device_arena.h"
#include "tensor/tensor_view.h"

namespace tandem::kernels {

// A point in a stream that another stream or the host can wait for (cudaEvent_t, aclrtEvent).
class Event {
 public:
  virtual ~Event() = default;
  // Blocks the host until the work recorded before this event is done.
  virtual void Synchronize() = 0;
};

// An in-order queue of ops and copies on one device (cudaStream_t, aclrtStream). One per
// worker; not shared between threads.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual const tensor::Device& device() const = 0;
  // Blocks the host until everything enqueued so far is done.
  virtual void Synchronize() = 0;
  // Marks the current end of this stream in `event`.
  virtual void Record(Event& event) = 0;
  // Work enqueued on this stream from now on starts after `event`'s work is done.
  virtual void Wait(Event& event) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual tensor::Device device() const = 0;
  // "cpu", "cuda" — the --device spelling.
  virtual const char* name() const = 0;
  // Device memory for arenas (weights, caches, activations, sampling scratch).
  virtual tensor::DeviceAllocator& allocator() = 0;
  virtual std::unique_ptr<Stream> CreateStream() = 0;
  virtual std::unique_ptr<Event> CreateEvent() = 0;
  // Edge copies, enqueued on `stream`: `bytes` from host memory `src` into `dst` (a view on
  // this device holding at least `bytes`; checked), and from `src` into host memory `dst`.
  // The host memory must stay valid until the stream is synchronized.
  virtual void CopyToDevice(const tensor::TensorView& dst, const void* src, size_t bytes,
                            Stream& stream) = 0;
  virtual void CopyToHost(void* dst, const tensor::TensorView& src, size_t bytes,
                          Stream& stream) = 0;
};

// The process's CPU backend (always present).
Backend& CpuBackend();

// The backend `--device` asks for (auto | cpu | cuda): auto is cuda when this binary was built
// with CUDA and a GPU is visible, else cpu. Errors: kInvalidArgument with one line naming
// --device and why it cannot be had (this build has no CUDA backend; no GPU is visible).
Result<Backend*> BackendFor(tensor::DeviceRequest request);
// Whether this binary has a CUDA backend (-DTANDEM_WITH_CUDA=ON).
bool HasCudaBackend();

}  // namespace tandem::kernels
