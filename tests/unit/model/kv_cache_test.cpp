// KvCache over cache groups (docs/design/hybrid-and-speculative.md §2): each layer gets the
// storage of its group, sized from the group; the costs of a block and of a state slot add up
// over groups.
#include "model/kv_cache.h"

#include <gtest/gtest.h>

namespace tandem::model {
namespace {

// A hybrid: attention at layers 0 and 2 (and an MTP head's layer 3, 4 KV heads of 8, bf16), a
// recurrent state of 10 floats at layer 1, and a second paged group of a narrower head (layer 4:
// 1 KV head of 4, f32).
CacheGroups Hybrid() {
  return {PagedKvGroup({0, 2, 3}, 4, 8, tensor::DType::kBF16), StateSlotGroup({1}, 10),
          PagedKvGroup({4}, 1, 4)};
}

TEST(KvCacheTest, BlockAndSlotCostsAddUpOverGroups) {
  const CacheGroups groups = Hybrid();
  // 3 layers × K,V × 16 tokens × 4 × 8 × 2 bytes + 1 layer × K,V × 16 × 1 × 4 × 4 bytes.
  EXPECT_EQ(BytesPerBlock(groups, 16), 3u * 2 * 16 * 4 * 8 * 2 + 2u * 16 * 4 * 4);
  EXPECT_EQ(BytesPerStateSlot(groups), 10u * 4);
  EXPECT_EQ(NumLayersOf(groups, CacheGroupKind::kPagedKv), 4);
  EXPECT_EQ(NumLayersOf(groups, CacheGroupKind::kStateSlot), 1);
  EXPECT_EQ(KvDtypeOf(groups), tensor::DType::kBF16);
  EXPECT_EQ(KvDtypeOf({StateSlotGroup({0}, 3)}), tensor::DType::kF32);
}

TEST(KvCacheTest, EachLayerGetsItsGroupsStorageZeroed) {
  KvCache kv;
  kv.Allocate(Hybrid(), /*num_blocks=*/3, /*block_size=*/16, /*num_state_slots=*/2);
  EXPECT_EQ(kv.num_state_slots, 2);
  for (int32_t layer : {0, 2, 3, 4}) {
    const LayerCache c = kv.ForLayer(layer);
    ASSERT_NE(c.key_cache, nullptr) << layer;
    ASSERT_NE(c.value_cache, nullptr) << layer;
    EXPECT_NE(c.key_cache, c.value_cache);
    EXPECT_EQ(c.state, nullptr);
    EXPECT_EQ(c.kv_dtype, layer == 4 ? tensor::DType::kF32 : tensor::DType::kBF16);
  }
  EXPECT_NE(kv.ForLayer(0).key_cache, kv.ForLayer(2).key_cache);
  const LayerCache state = kv.ForLayer(1);
  ASSERT_NE(state.state, nullptr);
  EXPECT_EQ(state.key_cache, nullptr);
  EXPECT_EQ(state.state_floats, 10);
  for (int i = 0; i < 2 * 10; ++i) {
    EXPECT_EQ(state.state[i], 0.0f);
  }
  // Layer 4's blocks: 3 blocks × 16 tokens × 1 head × 4 floats, all writable and zero.
  auto* k4 = static_cast<float*>(kv.ForLayer(4).key_cache);
  EXPECT_EQ(k4[3 * 16 * 4 - 1], 0.0f);
  EXPECT_FALSE(kv.Has(5));
  EXPECT_FALSE(kv.Has(-1));
  EXPECT_DEATH((void)kv.ForLayer(5), "KvCache holds no cache for layer 5");
}

TEST(KvCacheTest, ALayerInTwoGroupsIsRefused) {
  KvCache kv;
  EXPECT_DEATH(kv.Allocate({PagedKvGroup({0, 1}, 1, 4), StateSlotGroup({1}, 2)}, 1, 16, 1),
               "layer 1 is in cache groups 0 and 1");
}

TEST(KvCacheTest, WithoutAStateGroupThereAreNoSlots) {
  KvCache kv;
  kv.Allocate({PagedKvGroup({0}, 1, 4)}, 1, 16, /*num_state_slots=*/8);
  EXPECT_EQ(kv.num_state_slots, 0);
}

}  // namespace
}  // namespace tandem::model
