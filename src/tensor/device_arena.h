// DeviceAllocator and DeviceArena: device memory by lifetime (docs/design/device-seam.md §3).
// A backend's allocator hands out raw device bytes; an arena takes one buffer from it and hands
// out views by bumping a pointer, released all at once (Reset) or back to a Mark — per step for
// activations, never for weights. Nothing here knows which device it is on.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"
#include "tensor/tensor_view.h"

namespace tandem::tensor {

class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  virtual Device device() const = 0;
  // `bytes` of device memory aligned to `alignment` (a power of two); null when refused.
  virtual void* Allocate(size_t bytes, size_t alignment) = 0;
  // Returns memory from Allocate (ptr, with the bytes asked for). Null is a no-op.
  virtual void Free(void* ptr, size_t bytes) = 0;
};

class DeviceArena {
 public:
  // `name` appears in errors ("activations"); every view is aligned to `alignment` bytes (64:
  // a cache line, one AVX-512 vector). The allocator must outlive the arena.
  DeviceArena(DeviceAllocator& allocator, std::string name, size_t alignment = 64);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Bytes a view of `shape` × `dtype` takes here, alignment padding included.
  size_t BytesFor(const Shape& shape, DType dtype) const;
  // Makes the capacity at least `bytes` (growing by at least half the old capacity, so a
  // growing batch reallocates a few times, not every step). Only while nothing is allocated
  // (used() == 0, checked): the buffer may move. Errors: kResourceExhausted naming the arena and
  // the bytes when the allocator refuses.
  Status Reserve(size_t bytes);
  // A view of `shape` × `dtype`, uninitialised. Errors: kResourceExhausted naming the arena,
  // the bytes asked and the bytes left (a sizing bug: the arena never grows by itself).
  Result<TensorView> Allocate(const Shape& shape, DType dtype);
  // Allocate, aborting (TANDEM_CHECK) on exhaustion: for code that reserved first.
  TensorView AllocateOrDie(const Shape& shape, DType dtype);

  // Bytes in use now; Release(Mark()) later frees everything allocated in between.
  size_t Mark() const { return used_; }
  void Release(size_t mark);
  void Reset() { Release(0); }

  size_t used() const { return used_; }
  size_t capacity() const { return capacity_; }
  size_t high_water() const { return high_water_; }  // most bytes ever in use at once
  const Device& device() const { return device_; }

 private:
  DeviceAllocator& allocator_;
  std::string name_;
  size_t alignment_;
  Device device_;
  void* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  size_t high_water_ = 0;
};

// Scratch for one scope: everything allocated from `arena` while it lives is released when it
// ends (Mark at construction, Release at destruction). Scopes nest (a layer that calls another
// stacks its scratch on its caller's); they must end in reverse order of their start.
class ArenaScope {
 public:
  explicit ArenaScope(DeviceArena& arena) : arena_(arena), mark_(arena.Mark()) {}
  ~ArenaScope() { arena_.Release(mark_); }
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  DeviceArena& arena_;
  size_t mark_;
};

}  // namespace tandem::tensor
