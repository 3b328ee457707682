// DeviceArena: aligned views by bump allocation, marks, growth only while empty, and an error
// naming the arena when a view does not fit; ParseDeviceFlag and TensorView::Rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tensor/device.h"
#include "tensor/device_arena.h"
#include "tensor/tensor_view.h"

namespace tandem::tensor {
namespace {

// Host memory that counts what is live, and refuses past `limit` bytes.
class CountingAllocator : public DeviceAllocator {
 public:
  explicit CountingAllocator(size_t limit = SIZE_MAX) : limit_(limit) {}
  Device device() const override { return {}; }
  void* Allocate(size_t bytes, size_t alignment) override {
    if (bytes > limit_) {
      return nullptr;
    }
    ++allocations;
    live += bytes;
    return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  }
  void Free(void* ptr, size_t bytes) override {
    if (ptr == nullptr) {
      return;
    }
    live -= bytes;
    std::free(ptr);
  }
  size_t live = 0;
  int allocations = 0;

 private:
  size_t limit_;
};

TEST(DeviceArenaTest, HandsOutAlignedViewsAndReleasesToAMark) {
  CountingAllocator alloc;
  DeviceArena arena(alloc, "activations");
  ASSERT_TRUE(arena.Reserve(4096).ok());
  const TensorView a = arena.AllocateOrDie({3, 5}, DType::kF32);  // 60 bytes → 64
  EXPECT_EQ(a.numel(), 15);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % 64, 0u);
  EXPECT_EQ(arena.used(), 64u);
  const size_t mark = arena.Mark();
  const TensorView b = arena.AllocateOrDie({100}, DType::kI32);  // 400 bytes → 448
  EXPECT_EQ(static_cast<char*>(b.data) - static_cast<char*>(a.data), 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % 64, 0u);
  EXPECT_EQ(arena.used(), 64u + 448u);
  arena.Release(mark);
  EXPECT_EQ(arena.used(), 64u);
  const TensorView c = arena.AllocateOrDie({1}, DType::kF16);
  EXPECT_EQ(c.data, b.data);  // the released bytes are handed out again
  EXPECT_EQ(arena.high_water(), 64u + 448u);
  arena.Reset();
  EXPECT_EQ(arena.used(), 0u);
}

TEST(DeviceArenaTest, AViewThatDoesNotFitIsAnErrorNamingTheArena) {
  CountingAllocator alloc;
  DeviceArena arena(alloc, "sampling");
  ASSERT_TRUE(arena.Reserve(256).ok());
  ASSERT_TRUE(arena.Allocate({32}, DType::kF32).ok());  // 128 of 256
  const Result<TensorView> big = arena.Allocate({64}, DType::kF32);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(big.status().message(),
            "the sampling arena on cpu has 128 of 256 bytes left; [64] F32 needs 256");
  EXPECT_EQ(arena.used(), 128u);  // a refused view takes nothing
}

TEST(DeviceArenaTest, GrowsGeometricallyOnlyWhileEmptyAndFreesWhatItHeld) {
  CountingAllocator alloc;
  {
    DeviceArena arena(alloc, "activations");
    ASSERT_TRUE(arena.Reserve(1000).ok());
    EXPECT_EQ(arena.capacity(), 1000u);
    ASSERT_TRUE(arena.Reserve(1001).ok());  // by at least half: one reallocation, not many
    EXPECT_EQ(arena.capacity(), 1500u);
    ASSERT_TRUE(arena.Reserve(1400).ok());  // fits: no allocation
    EXPECT_EQ(alloc.allocations, 2);
    EXPECT_EQ(alloc.live, 1500u);
    arena.AllocateOrDie({1}, DType::kF32);
    EXPECT_DEATH((void)arena.Reserve(1 << 20), "grown while 64 bytes are in use");
  }
  EXPECT_EQ(alloc.live, 0u);
}

TEST(DeviceArenaTest, ARefusedReserveIsAnErrorAndKeepsTheOldBuffer) {
  CountingAllocator alloc(/*limit=*/4096);
  DeviceArena arena(alloc, "cache");
  ASSERT_TRUE(arena.Reserve(4096).ok());
  const Status st = arena.Reserve(8192);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(st.message(), "the cache arena on cpu could not get 8192 bytes");
  EXPECT_EQ(arena.capacity(), 4096u);
}

TEST(TensorViewTest, RowsIsAViewOfTheSameBytes) {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<float>(i);
  }
  const TensorView all = HostView({4, 3}, DType::kF32, data.data());
  const TensorView mid = all.Rows(1, 2);
  EXPECT_EQ(mid.shape, (Shape{2, 3}));
  EXPECT_EQ(mid.f32()[0], 3.0f);
  EXPECT_EQ(mid.f32()[5], 8.0f);
  EXPECT_DEATH((void)all.Rows(3, 2), "rows \\[3, 5\\) of a view of shape \\[4, 3\\]");
  EXPECT_DEATH((void)all.i32(), "view is F32, not I32");
  const TensorView flat = all.Reshaped({12});
  EXPECT_EQ(flat.f32()[11], 11.0f);
  EXPECT_DEATH((void)all.Reshaped({5, 2}), "reshape of \\[4, 3\\] to \\[5, 2\\]");
}

// A layer's scratch: a scope releases what was taken inside it, nested scopes stack.
TEST(DeviceArenaTest, ScopesReleaseTheirAllocationsInNestingOrder) {
  CountingAllocator alloc;
  DeviceArena arena(alloc, "activations");
  ASSERT_TRUE(arena.Reserve(1024).ok());
  const TensorView kept = arena.AllocateOrDie({4}, DType::kF32);
  const size_t before = arena.used();
  {
    const ArenaScope outer(arena);
    (void)arena.AllocateOrDie({16}, DType::kF32);
    {
      const ArenaScope inner(arena);
      (void)arena.AllocateOrDie({32}, DType::kF32);
      EXPECT_EQ(arena.used(), before + 64 + 128);
    }
    EXPECT_EQ(arena.used(), before + 64);
  }
  EXPECT_EQ(arena.used(), before);
  EXPECT_EQ(arena.high_water(), before + 64 + 128);
  EXPECT_NE(kept.data, nullptr);
}

TEST(DeviceTest, ParsesVllmsDeviceFlagAndNamesDevices) {
  EXPECT_EQ(ParseDeviceFlag("auto").value(), DeviceRequest::kAuto);
  EXPECT_EQ(ParseDeviceFlag("cpu").value(), DeviceRequest::kCpu);
  EXPECT_EQ(ParseDeviceFlag("cuda").value(), DeviceRequest::kCuda);
  const Result<DeviceRequest> bad = ParseDeviceFlag("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--device 'tpu' is not one of auto, cpu, cuda");
  EXPECT_EQ(DeviceName(Device{}), "cpu");
  EXPECT_EQ(DeviceName(Device{DeviceKind::kCuda, 1}), "cuda:1");
  EXPECT_EQ(DeviceName(Device{DeviceKind::kNpu, 3}), "npu:3");
}

}  // namespace
}  // namespace tandem::tensor
