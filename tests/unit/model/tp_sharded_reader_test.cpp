// ShardedReader: each TP rank's shard of a weight under every split rule (column, row, KV heads
// split or replicated, vocab padded, 3-D expert stacks, row-parallel bias), and CheckAll()
// rejects a non-dividing size naming the tensor, its shape and the flag without reading data.
#include "model/loader/sharded_reader.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>

namespace tandem::model {
namespace {

// Tensors whose value i is i (so a shard shows which elements it took); counts data reads.
class FakeSource : public WeightSource {
 public:
  void Add(const std::string& name, tensor::Shape shape) { shapes_[name] = std::move(shape); }
  const std::string& source_name() const override { return name_; }
  bool HasTensor(const std::string& name) const override { return shapes_.count(name) > 0; }
  Result<tensor::Shape> TensorShape(const std::string& name) const override {
    if (!HasTensor(name)) return InvalidArgument("no " + name);
    return shapes_.at(name);
  }
  Result<tensor::Tensor> ReadF32(const std::string& name) const override {
    ++reads;
    tensor::Tensor t(shapes_.at(name), tensor::DType::kF32);
    std::iota(t.mutable_f32(), t.mutable_f32() + t.numel(), 0.0f);
    return t;
  }
  mutable int reads = 0;

 private:
  std::string name_ = "fake.safetensors";
  std::map<std::string, tensor::Shape> shapes_;
};

std::vector<float> ReadShard(FakeSource& src, int rank, int size, const std::string& name,
                             tensor::Shape shape, ShardRule rule) {
  src.Add(name, shape);
  ShardedReader r(src, TpContext{rank, size, nullptr});
  r.Declare(name, shape, rule);
  EXPECT_TRUE(r.CheckAll().ok());
  auto v = r.Read(name);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : std::vector<float>{};
}

TEST(ShardedReaderTest, ColumnParallelTakesThisRanksWholeHeads) {
  FakeSource src;  // [4 heads * 2, 1]: rank 1 of 2 takes heads 2, 3 = rows 4..7
  EXPECT_EQ(ReadShard(src, 1, 2, "q", {8, 1}, ColumnParallel("query heads", 0, 2)),
            (std::vector<float>{4, 5, 6, 7}));
}

TEST(ShardedReaderTest, RowParallelTakesThisRanksInputColumns) {
  FakeSource src;  // [2, 4]: rank 1 of 2 takes columns 2, 3 of each row
  EXPECT_EQ(ReadShard(src, 1, 2, "down", {2, 4}, RowParallel("intermediate columns")),
            (std::vector<float>{2, 3, 6, 7}));
}

TEST(ShardedReaderTest, KvHeadsAreSplitWhenEnoughAndReplicatedWhenFewer) {
  FakeSource src;  // 2 KV heads of head_dim 1
  EXPECT_EQ(ReadShard(src, 1, 2, "k", {2, 1}, KvHeadParallel(1)), (std::vector<float>{1}));
  // TP=4: ranks 0,1 use KV head 0; ranks 2,3 use KV head 1 (vLLM: rank / (tp / heads)).
  EXPECT_EQ(ReadShard(src, 1, 4, "k", {2, 1}, KvHeadParallel(1)), (std::vector<float>{0}));
  EXPECT_EQ(ReadShard(src, 2, 4, "k", {2, 1}, KvHeadParallel(1)), (std::vector<float>{1}));
}

TEST(ShardedReaderTest, VocabSliceIsZeroPaddedToEqualSize) {
  FakeSource src;  // vocab 5, dim 1, TP=2: slices of 3 rows; rank 1 holds ids 3, 4 + padding
  EXPECT_EQ(ReadShard(src, 0, 2, "embd", {5, 1}, VocabParallel()), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(ReadShard(src, 1, 2, "embd", {5, 1}, VocabParallel()), (std::vector<float>{3, 4, 0}));
}

TEST(ShardedReaderTest, ExpertStackSplitsEachExpertsRows) {
  FakeSource src;  // [2 experts, 2 rows, 1]: rank 1 takes row 1 of each expert
  EXPECT_EQ(ReadShard(src, 1, 2, "gate_exps", {2, 2, 1}, ColumnParallel("rows", 1)),
            (std::vector<float>{1, 3}));
}

TEST(ShardedReaderTest, RowParallelBiasIsAddedOnRankZeroOnly) {
  FakeSource src;
  EXPECT_EQ(ReadShard(src, 0, 2, "o.bias", {3}, RowParallelBias()), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(ReadShard(src, 1, 2, "o.bias", {3}, RowParallelBias()), (std::vector<float>{0, 0, 0}));
}

TEST(ShardedReaderTest, NonDividingSizeIsRejectedBeforeAnyRead) {
  FakeSource src;
  src.Add("norm", {172});
  src.Add("mlp.down_proj.weight", {64, 172});
  ShardedReader r(src, TpContext{0, 3, nullptr});
  r.Declare("norm", {172}, Replicated());
  r.Declare("mlp.down_proj.weight", {64, 172}, RowParallel("intermediate columns"));
  const Status s = r.CheckAll();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"mlp.down_proj.weight", "[64, 172]", "172 intermediate columns",
                           "--tensor-parallel-size 3"}) {
    EXPECT_NE(s.ToString().find(part), std::string::npos) << part << " not in " << s.ToString();
  }
  EXPECT_EQ(src.reads, 0);
}

TEST(ShardedReaderTest, KvHeadsNeitherDividingNorMultipleAreRejected) {
  FakeSource src;
  src.Add("k", {4, 1});
  ShardedReader r(src, TpContext{0, 3, nullptr});
  r.Declare("k", {4, 1}, KvHeadParallel(1));
  EXPECT_NE(r.CheckAll().ToString().find("4 KV heads"), std::string::npos);
}

TEST(ShardedReaderTest, HeaderShapeMismatchNamesExpectedAndFound) {
  FakeSource src;
  src.Add("w", {4, 3});
  ShardedReader r(src, TpContext{});
  r.Declare("w", {4, 2}, Replicated());
  const std::string msg = r.CheckAll().ToString();
  EXPECT_NE(msg.find("[4, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4, 2]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tandem::model
