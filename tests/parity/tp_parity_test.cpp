// Tensor parallel parity: every TP rank is a thread with its own model instance (its shard),
// its own KvCache and its own GreedyRunner, joined by the "local" ProcessGroup; all ranks run
// the same schedule in lock-step (the gathered logits are identical on every rank, so every
// rank samples the same tokens). Checked against TP=1 and the goldens:
// - stories260K (8 query heads, 4 KV heads, FFN 172), GGUF and HF: TP=2 and TP=4 give the
//   golden greedy ids and the TP=1 logits within 1e-4, batched and with chunked prefill.
// - tiny-qwen3 (4 query heads, 2 KV heads, tied 151936 vocab): TP=2 (KV heads split) and TP=4
//   (KV heads replicated, one per rank) give the golden ids and TP=1's logits within 1e-3.
// - tiny-qwen3-moe (experts of 32 split over TP): TP=2 gives the golden ids (logits 1e-3).
// The golden JSON is bound to a local before iterating it (a range-for over a member of a
// temporary would read freed memory).
// - a TP size that does not divide a sharded size is an error naming the tensor, its size and
//   --tensor-parallel-size (stories TP=3; the 43-wide experts of the stories MoE files at TP=2).
#include <gtest/gtest.h>

#include <atomic>

#include "comm/process_group.h"
#include "common/rank_threads.h"
#include "golden_cases.h"
#include "model/model.h"

namespace tandem::model {
namespace tp_parity_test {
namespace {

using testing::Golden;
using testing::GreedyRunner;
using testing::MaxAbsDiff;
using testing::QwenGolden;
using testing::Seq;
using testing::StoriesGolden;

const std::string kShared = TANDEM_SHARED_DIR;
const std::string kGguf = kShared + "/models/stories260k/stories260K.gguf";
const std::string kHf = kShared + "/models/stories260k-hf";
const std::string kMoeGguf = kShared + "/models/stories260k-moe-gguf/stories260K-moe8x4.gguf";
const std::string kQwen3 = kShared + "/models/tiny-qwen3";
const std::string kQwen3Moe = kShared + "/models/tiny-qwen3-moe";
const std::string kQwen2Moe = kShared + "/models/stories260k-qwen2moe-hf";
constexpr int32_t kBos = 1;               // stories: sampling BOS ends a sequence (run.c)
constexpr int32_t kNoStop = -1;           // Qwen goldens always generate all their ids
constexpr int32_t kNumBlocks = 128;       // 2048 KV slots: every case of a golden at once
constexpr float kLogitTolerance = 1e-4f;  // stories: TP=N vs TP=1 (issue 5, section 4)
// tiny-qwen3: the all-reduce re-orders f32 sums over hidden 16 / 151936 logits; observed
// 1.3e-4 max vs TP=1 — its golden's own fp32 tolerance (logprob_fp32_engine) is 1e-3.
constexpr float kQwenLogitTolerance = 1e-3f;

int g_group_id = 0;  // a fresh local group name per run

// Runs `seqs` (all in one batch, prefill in `chunk`-token steps, 0 = whole) on `tp_size` ranks;
// returns every rank's finished sequences, rank-major. The ranks run through
// common/rank_threads.h and their group times out: a failing rank fails the test, not hangs it.
std::vector<std::vector<Seq>> RunTp(const std::string& path, int tp_size,
                                    const std::vector<Seq>& seqs, int32_t chunk,
                                    int32_t stop_token_id) {
  std::vector<std::vector<Seq>> out(tp_size, seqs);
  const std::string group_name = "tp-parity-" + std::to_string(g_group_id++);
  rank_threads::RunRankThreads(tp_size, [&](int rank, const std::atomic<bool>&) {
    std::unique_ptr<comm::ProcessGroup> group;
    if (tp_size > 1) {
      auto g = comm::CreateProcessGroup(rank_threads::LocalGroupSpec(group_name, rank, tp_size));
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      group = std::move(g).value();
    }
    LoadOptions options;
    options.num_threads = 1;
    options.tp_rank = rank;
    options.tp_size = tp_size;
    options.tp_group = group.get();
    auto model = LoadModel(path, options);
    ASSERT_TRUE(model.ok()) << path << " TP rank " << rank << ": " << model.status().ToString();
    GreedyRunner runner(**model, stop_token_id, kNumBlocks);
    runner.Run(out[rank], chunk, /*collect_all_logits=*/false);
  });
  return out;
}

// TP=tp_size gives the golden ids on every rank, and (when `logit_tolerance` >= 0) each
// sampled step's logits within it of TP=1's.
void ExpectTpMatchesTp1(const std::string& path, const Golden& golden, int tp_size, int32_t chunk,
                        int32_t stop_token_id, float logit_tolerance) {
  ASSERT_GE(golden.seqs.size(), 4u) << path << ": golden cases not read";
  const auto tp1 = RunTp(path, 1, golden.seqs, chunk, stop_token_id);
  const auto tpn = RunTp(path, tp_size, golden.seqs, chunk, stop_token_id);
  ASSERT_EQ(tpn.size(), static_cast<size_t>(tp_size));
  for (size_t i = 0; i < golden.seqs.size(); ++i) {
    EXPECT_EQ(tp1[0][i].generated, golden.expected[i]) << path << " TP=1, case " << i;
    for (int rank = 0; rank < tp_size; ++rank) {
      ASSERT_EQ(tpn[rank].size(), golden.seqs.size());
      EXPECT_EQ(tpn[rank][i].generated, golden.expected[i])
          << path << " TP=" << tp_size << " rank " << rank << ", chunk " << chunk << ", case " << i;
      if (logit_tolerance >= 0) {
        EXPECT_LE(MaxAbsDiff(tpn[rank][i].sampled_logits, tp1[0][i].sampled_logits),
                  logit_tolerance)
            << path << " TP=" << tp_size << " rank " << rank << ", case " << i;
      }
    }
  }
}

TEST(TpParityTest, StoriesGgufTp2AndTp4MatchTp1TokensAndLogits) {
  for (int tp : {2, 4}) {
    ExpectTpMatchesTp1(kGguf, StoriesGolden(kShared), tp, 0, kBos, kLogitTolerance);
  }
}

TEST(TpParityTest, StoriesHfTp2AndTp4MatchTp1TokensAndLogits) {
  for (int tp : {2, 4}) {
    ExpectTpMatchesTp1(kHf, StoriesGolden(kShared), tp, 0, kBos, kLogitTolerance);
  }
}

TEST(TpParityTest, StoriesChunkedPrefillTp2MatchesTp1) {
  ExpectTpMatchesTp1(kHf, StoriesGolden(kShared), 2, /*chunk=*/3, kBos, kLogitTolerance);
}

TEST(TpParityTest, TinyQwen3Tp2SplitsAndTp4ReplicatesKvHeads) {
  for (int tp : {2, 4}) {
    ExpectTpMatchesTp1(kQwen3, QwenGolden(kQwen3), tp, 0, kNoStop, kQwenLogitTolerance);
  }
}

TEST(TpParityTest, TinyQwen3MoeTp2MatchesTp1Tokens) {
  ExpectTpMatchesTp1(kQwen3Moe, QwenGolden(kQwen3Moe), 2, 0, kNoStop, kQwenLogitTolerance);
}

TEST(TpParityTest, CacheGroupsAndInfoReportThisRanksShard) {
  for (const auto& shape : {std::pair{2, 2}, std::pair{4, 1}}) {
    // Named copies, not a structured binding: clang (clang-tidy) cannot capture those in lambdas.
    const int tp = shape.first;
    const int kv_heads = shape.second;
    // stories: 8 query heads, 4 KV heads → TP=2: 4 + 2 per rank; TP=4: 2 + 1 per rank.
    const auto runs = [&] {
      std::vector<ModelInfo> infos(tp);
      std::vector<CacheGroups> groups(tp);
      const std::string name = "tp-info-" + std::to_string(g_group_id++);
      rank_threads::RunRankThreads(tp, [&](int rank, const std::atomic<bool>&) {
        auto g = comm::CreateProcessGroup(rank_threads::LocalGroupSpec(name, rank, tp));
        ASSERT_TRUE(g.ok()) << g.status().ToString();
        LoadOptions options;
        options.tp_rank = rank;
        options.tp_size = tp;
        options.tp_group = g->get();
        auto model = LoadModel(kGguf, options);
        ASSERT_TRUE(model.ok()) << model.status().ToString();
        infos[rank] = (*model)->info();
        groups[rank] = (*model)->cache_groups();
      });
      return std::pair{infos, groups};
    }();
    for (int rank = 0; rank < tp; ++rank) {
      EXPECT_EQ(runs.first[rank].num_heads, 8 / tp);
      EXPECT_EQ(runs.first[rank].num_kv_heads, kv_heads);
      EXPECT_EQ(runs.first[rank].vocab_size, 512);  // logits stay full
      EXPECT_EQ(runs.first[rank].tp_rank, rank);
      EXPECT_EQ(runs.first[rank].tp_size, tp);
      ASSERT_EQ(runs.second[rank].size(), 1u);
      EXPECT_EQ(runs.second[rank][0].num_kv_heads, kv_heads);
    }
  }
}

class FakeTpGroup : public comm::ProcessGroup {
 public:
  FakeTpGroup(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& backend() const override { return backend_; }
  // The load must fail before any collective; every call is a test failure.
  Status AllReduceSum(float*, size_t) override { return Fail(); }
  Status AllReduceSumBf16(uint16_t*, size_t) override { return Fail(); }
  Status AllGather(const float*, size_t, float*) override { return Fail(); }
  Status ReduceScatterSum(const float*, size_t, float*) override { return Fail(); }
  Status AllToAll(const float*, const std::vector<size_t>&, float*,
                  const std::vector<size_t>&) override {
    return Fail();
  }
  Status Broadcast(float*, size_t, int) override { return Fail(); }
  Status Barrier() override { return Fail(); }

 private:
  Status Fail() {
    ADD_FAILURE() << "collective called during a load that must fail";
    return Unavailable("fake group");
  }
  int rank_, size_;
  std::string backend_ = "fake";
};

Status LoadWithTp(const std::string& path, int tp_size) {
  FakeTpGroup group(0, tp_size);
  LoadOptions options;
  options.tp_size = tp_size;
  options.tp_group = &group;
  return LoadModel(path, options).status();
}

void ExpectMessageHas(const Status& s, const std::vector<std::string>& parts) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  for (const std::string& p : parts) {
    EXPECT_NE(s.ToString().find(p), std::string::npos) << "'" << p << "' not in: " << s.ToString();
  }
}

TEST(TpParityTest, NonDividingTpSizeNamesTheTensorItsSizeAndTheFlag) {
  ExpectMessageHas(LoadWithTp(kHf, 3), {"model.layers.0.self_attn.q_proj.weight", "[64, 64]",
                                        "8 query heads", "--tensor-parallel-size 3"});
  ExpectMessageHas(LoadWithTp(kGguf, 3),
                   {"blk.0.attn_q.weight", "8 query heads", "--tensor-parallel-size 3"});
  // 16 query heads would divide 8 but not the 4 KV heads... stories at TP=8 splits 8 query
  // heads into 1 each and replicates the 4 KV heads (8 % 4 == 0); the FFN's 172 does not divide.
  ExpectMessageHas(LoadWithTp(kHf, 8), {"model.layers.0.mlp.gate_proj.weight", "[172, 64]",
                                        "172 intermediate rows", "--tensor-parallel-size 8"});
}

TEST(TpParityTest, MoeExpertsOf43DoNotSplitOverTwoRanks) {
  // Without expert parallel each expert is split over TP (vLLM FusedMoE): 43 rows cannot be.
  ExpectMessageHas(LoadWithTp(kQwen2Moe, 2),
                   {"model.layers.0.mlp.experts.0.gate_proj.weight", "[43, 64]",
                    "43 intermediate rows", "--tensor-parallel-size 2"});
  ExpectMessageHas(LoadWithTp(kMoeGguf, 2), {"blk.0.ffn_gate_exps.weight", "43 intermediate rows",
                                             "--tensor-parallel-size 2"});
}

TEST(TpParityTest, TpSizeWithoutAMatchingGroupIsRejected) {
  LoadOptions options;
  options.tp_size = 2;
  ExpectMessageHas(LoadModel(kGguf, options).status(), {"tp_group is null"});
  FakeTpGroup wrong(1, 4);
  options.tp_group = &wrong;
  ExpectMessageHas(LoadModel(kGguf, options).status(), {"rank 1 of 4", "--tensor-parallel-size 2"});
}

}  // namespace
}  // namespace tp_parity_test
}  // namespace tandem::model
