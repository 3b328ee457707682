// Qwen goldens from Hugging Face folders, driven through the paged KV cache:
// - tiny-qwen3 (Qwen3ForCausalLM) and tiny-qwen3-moe (Qwen3MoeForCausalLM): every golden.json
//   case's 32 greedy ids exactly (conventions: no BOS, prompt fed as ids, greedy argmax over raw
//   logits, fp32 compute), and the top-5 logprobs of the first 4 generated positions within the
//   golden's fp32 tolerance (1e-3); batched + chunked prefill gives the same ids.
// - stories260k-qwen2moe-hf (Qwen2MoeForCausalLM, exact MoE re-packing of stories260K): every
//   `generation` case of stories260K.golden.json (run.c conventions, as model_golden_test.cpp)
//   and its prefill logits within 1e-3.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "golden_cases.h"
#include "model/model.h"
#include "testing.h"

namespace tandem::model {
namespace qwen_golden_test {
namespace {

using testing::GreedyRunner;
using testing::Load;
using testing::LoadQwenCases;
using testing::MakeQwenSeq;
using testing::MaxAbsDiff;
using testing::QwenCase;
using testing::Seq;

const std::string kShared = TANDEM_SHARED_DIR;
const std::string kQwen3 = kShared + "/models/tiny-qwen3";
const std::string kQwen3Moe = kShared + "/models/tiny-qwen3-moe";
const std::string kQwen2Moe = kShared + "/models/stories260k-qwen2moe-hf";
constexpr int32_t kNoStop = -1;      // the Qwen goldens always generate all 32 ids
constexpr int32_t kNumBlocks = 128;  // 2048 KV slots: every case of one golden at once
// The top-5 logprobs are compared within golden.json's conventions.tolerances
// .logprob_fp32_engine, 1e-3 (testing::ExpectGoldenOneByOne's default).

// All cases in one flat batch, prefill in chunks of `chunk` tokens, then batched decode.
void ExpectQwenGoldenBatched(const std::string& dir, int32_t chunk) {
  auto model = Load(dir);
  ASSERT_NE(model, nullptr);
  const auto cases = LoadQwenCases(dir);
  std::vector<Seq> seqs;
  for (const QwenCase& c : cases) seqs.push_back(MakeQwenSeq(c));
  GreedyRunner runner(*model, kNoStop, kNumBlocks);
  runner.Run(seqs, chunk, false);
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(seqs[i].generated, cases[i].generated_ids)
        << dir << ", chunk " << chunk << ", case " << cases[i].name;
  }
}

TEST(QwenGoldenTest, Qwen3GreedyIdsAndTop5LogprobsMatchEveryGoldenCase) {
  testing::ExpectGoldenOneByOne(kQwen3);
}
TEST(QwenGoldenTest, Qwen3MoeGreedyIdsAndTop5LogprobsMatchEveryGoldenCase) {
  testing::ExpectGoldenOneByOne(kQwen3Moe);
}
// llama.cpp's converter wrote the shipped F16 GGUFs from the same (bf16) weights: their values
// equal the safetensors' exactly (PROVENANCE.md), so the goldens hold as for the folders; the
// F16 weights are kept as F16 (MatmulTyped).
TEST(QwenGoldenTest, Qwen3F16GgufMatchesEveryGoldenCase) {
  testing::ExpectGoldenOneByOne(kQwen3, kQwen3 + "/tiny-qwen3-f16.gguf");
}
TEST(QwenGoldenTest, Qwen3MoeF16GgufMatchesEveryGoldenCase) {
  testing::ExpectGoldenOneByOne(kQwen3Moe, kQwen3Moe + "/tiny-qwen3-moe-f16.gguf");
}
TEST(QwenGoldenTest, Qwen3MoeF16GgufKeepsF16Weights) {
  auto gguf = Load(kQwen3Moe + "/tiny-qwen3-moe-f16.gguf");
  auto folder = Load(kQwen3Moe);
  ASSERT_NE(gguf, nullptr);
  ASSERT_NE(folder, nullptr);
  // Same parameters, both 16-bit (bf16 folder, f16 file): the same resident bytes.
  EXPECT_EQ(gguf->info().weight_bytes, folder->info().weight_bytes);
  EXPECT_EQ(gguf->info().architecture, "Qwen3MoeForCausalLM");
}

TEST(QwenGoldenTest, Qwen3BatchedAndChunkedPrefillMatchesGolden) {
  ExpectQwenGoldenBatched(kQwen3, /*chunk=*/7);
}
TEST(QwenGoldenTest, Qwen3MoeBatchedAndChunkedPrefillMatchesGolden) {
  ExpectQwenGoldenBatched(kQwen3Moe, /*chunk=*/5);
}

TEST(QwenGoldenTest, ModelInfoDescribesTinyQwen3AndItsMoe) {
  auto dense = Load(kQwen3);
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->info().architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(dense->info().vocab_size, 151936);
  EXPECT_EQ(dense->info().hidden_size, 16);
  EXPECT_EQ(dense->info().num_heads, 4);
  EXPECT_EQ(dense->info().head_dim, 16);  // != hidden / heads
  EXPECT_EQ(BytesPerBlock(dense->cache_groups(), 16), 3u * 2 * 16 * 2 * 16 * 4);
  auto moe = Load(kQwen3Moe);
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(moe->info().num_experts, 8);
  EXPECT_EQ(moe->info().num_experts_per_tok, 2);
}

// ---- stories260k-qwen2moe-hf against the stories260K goldens (run.c conventions) ----

constexpr int32_t kBos = 1;  // sampling BOS ends a run.c generation

const std::string kStoriesGolden = testing::StoriesGoldenPath(kShared);

// stories260K.golden.json; throws naming it when it is missing, empty or not JSON.
nlohmann::json LoadStoriesGolden() { return testing::LoadGoldenJson(kStoriesGolden); }

// Its `generation` cases (a reference into `golden`); throws when there are none.
const nlohmann::json& StoriesCases(const nlohmann::json& golden) {
  return testing::RequireCases(golden, "generation", kStoriesGolden);
}

Seq MakeStoriesSeq(const nlohmann::json& g) {
  Seq s;
  s.tokens = g["prompt_ids"].get<std::vector<int32_t>>();
  // Positions 0..steps-1 are fed; the first len-1 feed forced prompt tokens.
  s.num_to_generate = g["steps"].get<int32_t>() - (static_cast<int32_t>(s.tokens.size()) - 1);
  return s;
}

TEST(QwenGoldenTest, Qwen2MoeStoriesGreedyDecodeMatchesEveryGoldenCase) {
  auto model = Load(kQwen2Moe);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->info().architecture, "Qwen2MoeForCausalLM");
  const auto golden = LoadStoriesGolden();
  const nlohmann::json& cases = StoriesCases(golden);
  for (int32_t chunk : {0, 3}) {
    std::vector<Seq> batch;
    for (const auto& g : cases) {
      GreedyRunner runner(*model, kBos);
      std::vector<Seq> one = {MakeStoriesSeq(g)};
      runner.Run(one, chunk, false);
      EXPECT_EQ(one[0].generated, g["generated_ids"].get<std::vector<int32_t>>())
          << "chunk " << chunk << ", prompt '" << g["prompt"].get<std::string>() << "'";
      batch.push_back(MakeStoriesSeq(g));
    }
    GreedyRunner runner(*model, kBos);
    runner.Run(batch, chunk, false);
    size_t i = 0;
    for (const auto& g : cases) {
      EXPECT_EQ(batch[i++].generated, g["generated_ids"].get<std::vector<int32_t>>())
          << "batched, chunk " << chunk << ", prompt '" << g["prompt"].get<std::string>() << "'";
    }
  }
}

TEST(QwenGoldenTest, Qwen2MoeStoriesPrefillLogitsMatchGolden) {
  auto model = Load(kQwen2Moe);
  ASSERT_NE(model, nullptr);
  const auto golden = LoadStoriesGolden();
  const nlohmann::json* with_logits = nullptr;
  for (const auto& g : StoriesCases(golden)) {
    if (g.contains("prefill_logits")) with_logits = &g;
  }
  ASSERT_NE(with_logits, nullptr);
  std::vector<float> want;
  for (const auto& row : (*with_logits)["prefill_logits"]) {
    for (float v : row.get<std::vector<float>>()) want.push_back(v);
  }
  GreedyRunner runner(*model, kBos);
  Seq s;
  s.tokens = (*with_logits)["prompt_ids"].get<std::vector<int32_t>>();
  s.num_to_generate = 1;
  std::vector<Seq> seqs = {s};
  runner.Run(seqs, 0, /*collect_all_logits=*/true);
  EXPECT_LT(MaxAbsDiff(seqs[0].logits, want), 1e-3f);
}

}  // namespace
}  // namespace qwen_golden_test
}  // namespace tandem::model
