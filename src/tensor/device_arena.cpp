#include "tensor/device_arena.h"

#include <algorithm>
#include <utility>

namespace tandem::tensor {

DeviceArena::DeviceArena(DeviceAllocator& allocator, std::string name, size_t alignment)
    : allocator_(allocator),
      name_(std::move(name)),
      alignment_(alignment),
      device_(allocator.device()) {
  TANDEM_CHECK(alignment_ > 0 && (alignment_ & (alignment_ - 1)) == 0)
      << "arena '" << name_ << "': alignment " << alignment_ << " is not a power of two";
}

DeviceArena::~DeviceArena() { allocator_.Free(base_, capacity_); }

size_t DeviceArena::BytesFor(const Shape& shape, DType dtype) const {
  const size_t bytes = DTypeBytes(dtype, NumElements(shape));
  return (bytes + alignment_ - 1) / alignment_ * alignment_;
}

Status DeviceArena::Reserve(size_t bytes) {
  if (bytes <= capacity_) {
    return Status::Ok();
  }
  TANDEM_CHECK(used_ == 0) << "arena '" << name_ << "' grown while " << used_
                           << " bytes are in use";
  const size_t grown = std::max(bytes, capacity_ + capacity_ / 2);
  void* fresh = allocator_.Allocate(grown, alignment_);
  if (fresh == nullptr) {
    return Status(StatusCode::kResourceExhausted, "the " + name_ + " arena on " +
                                                      DeviceName(device_) + " could not get " +
                                                      std::to_string(grown) + " bytes");
  }
  allocator_.Free(base_, capacity_);
  base_ = fresh;
  capacity_ = grown;
  return Status::Ok();
}

Result<TensorView> DeviceArena::Allocate(const Shape& shape, DType dtype) {
  const size_t bytes = BytesFor(shape, dtype);
  if (bytes > capacity_ - used_) {
    return Status(StatusCode::kResourceExhausted,
                  "the " + name_ + " arena on " + DeviceName(device_) + " has " +
                      std::to_string(capacity_ - used_) + " of " + std::to_string(capacity_) +
                      " bytes left; " + ShapeToString(shape) + " " + DTypeName(dtype) + " needs " +
                      std::to_string(bytes));
  }
  TensorView view{device_, dtype, shape, static_cast<char*>(base_) + used_};
  used_ += bytes;
  high_water_ = std::max(high_water_, used_);
  return view;
}

TensorView DeviceArena::AllocateOrDie(const Shape& shape, DType dtype) {
  Result<TensorView> view = Allocate(shape, dtype);
  TANDEM_CHECK(view.ok()) << view.status().message();
  return std::move(view).value();
}

void DeviceArena::Release(size_t mark) {
  TANDEM_CHECK(mark <= used_) << "arena '" << name_ << "': release to " << mark << " above "
                              << used_ << " bytes in use";
  used_ = mark;
}

}  // namespace tandem::tensor
