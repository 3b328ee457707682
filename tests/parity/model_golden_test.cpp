// Model goldens: greedy decode through the paged KV cache reproduces every `generation` case of
// stories260K.golden.json for the GGUF file, the HF folder and the 8x4 MoE GGUF; prefill logits
// match the golden within its stated tolerance; chunked prefill and batching change nothing;
// GGUF and HF layouts give the same logits.
// Golden conventions (run.c): prompt_ids start with BOS=1; positions 0..steps-1 are fed; prompt
// tokens are forced, the rest greedy; generated_ids exclude forced tokens; BOS sampled = stop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/golden_json.h"
#include "model/model.h"
#include "testing.h"

namespace tandem::model {
namespace model_golden_test {
namespace {

using golden_files::LoadGoldenJson;
using golden_files::RequireCases;
using testing::GreedyRunner;
using testing::Load;
using testing::MaxAbsDiff;
using testing::Seq;

const std::string kShared = TANDEM_SHARED_DIR;
const std::string kGguf = kShared + "/models/stories260k/stories260K.gguf";
const std::string kHf = kShared + "/models/stories260k-hf";
const std::string kMoe = kShared + "/models/stories260k-moe-gguf/stories260K-moe8x4.gguf";
const std::string kGolden = kShared + "/models/stories260k/stories260K.golden.json";
constexpr int32_t kBos = 1;

struct GoldenCase {
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  int32_t steps = 0;
  std::vector<int32_t> generated_ids;
};

// Every `generation` case; throws naming the file when it is missing, empty or has none.
std::vector<GoldenCase> LoadCases() {
  std::vector<GoldenCase> cases;
  // Bound to a local: a range-for over a member of the temporary LoadGoldenJson() returns would
  // iterate a reference destroyed before the loop body (undefined behaviour; read as no cases).
  const nlohmann::json golden = LoadGoldenJson(kGolden);
  for (const auto& g : RequireCases(golden, "generation", kGolden)) {
    cases.push_back({g["prompt"], g["prompt_ids"].get<std::vector<int32_t>>(), g["steps"],
                     g["generated_ids"].get<std::vector<int32_t>>()});
  }
  return cases;
}

Seq MakeSeq(const GoldenCase& c) {
  Seq s;
  s.tokens = c.prompt_ids;
  // Positions 0..steps-1 are fed; the first len-1 feed forced prompt tokens.
  s.num_to_generate = c.steps - (static_cast<int32_t>(c.prompt_ids.size()) - 1);
  return s;
}

void ExpectGoldenOneByOne(const std::string& path) {
  auto model = Load(path);
  ASSERT_NE(model, nullptr);
  for (const GoldenCase& c : LoadCases()) {
    GreedyRunner runner(*model, kBos);
    std::vector<Seq> seqs = {MakeSeq(c)};
    runner.Run(seqs, /*chunk=*/0, /*collect_all_logits=*/false);
    EXPECT_EQ(seqs[0].generated, c.generated_ids) << path << ", prompt '" << c.prompt << "'";
  }
}

TEST(ModelGoldenTest, GgufGreedyDecodeMatchesEveryGoldenCase) { ExpectGoldenOneByOne(kGguf); }
TEST(ModelGoldenTest, HfFolderGreedyDecodeMatchesEveryGoldenCase) { ExpectGoldenOneByOne(kHf); }
TEST(ModelGoldenTest, MoeGgufGreedyDecodeMatchesEveryGoldenCase) { ExpectGoldenOneByOne(kMoe); }

// All cases in one batch (mixed prefill lengths, then batched decode), chunked prefill of 3.
TEST(ModelGoldenTest, BatchedAndChunkedDecodeMatchesGoldenForAllModels) {
  for (const std::string& path : {kGguf, kHf, kMoe}) {
    auto model = Load(path);
    ASSERT_NE(model, nullptr);
    const auto cases = LoadCases();
    for (int32_t chunk : {0, 3}) {
      std::vector<Seq> seqs;
      for (const GoldenCase& c : cases) seqs.push_back(MakeSeq(c));
      GreedyRunner runner(*model, kBos);
      runner.Run(seqs, chunk, false);
      for (size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(seqs[i].generated, cases[i].generated_ids)
            << path << ", chunk " << chunk << ", prompt '" << cases[i].prompt << "'";
      }
    }
  }
}

// Logits of every prompt row, prefilling in `chunks` equal-ish steps.
std::vector<float> PrefillLogits(Model& model, const std::vector<int32_t>& prompt, int32_t chunk) {
  GreedyRunner runner(model, kBos);
  Seq s;
  s.tokens = prompt;
  s.num_to_generate = 1;
  std::vector<Seq> seqs = {s};
  runner.Run(seqs, chunk, /*collect_all_logits=*/true);
  return seqs[0].logits;
}

// The golden case that carries prefill_logits: its prompt ids and logits [prompt, vocab].
bool LoadPrefillGolden(std::vector<int32_t>* prompt, std::vector<float>* logits) {
  const nlohmann::json golden = LoadGoldenJson(kGolden);
  for (const auto& g : RequireCases(golden, "generation", kGolden)) {
    if (!g.contains("prefill_logits")) continue;
    *prompt = g["prompt_ids"].get<std::vector<int32_t>>();
    for (const auto& row : g["prefill_logits"]) {
      for (float v : row.get<std::vector<float>>()) logits->push_back(v);
    }
    return !logits->empty();
  }
  return false;
}

TEST(ModelGoldenTest, PrefillLogitsMatchGoldenAndChunkedPrefillIsIdentical) {
  std::vector<int32_t> prompt;
  std::vector<float> want;
  ASSERT_TRUE(LoadPrefillGolden(&prompt, &want));
  for (const std::string& path : {kGguf, kHf, kMoe}) {
    auto model = Load(path);
    ASSERT_NE(model, nullptr);
    const auto one_step = PrefillLogits(*model, prompt, 0);
    const int32_t half = (static_cast<int32_t>(prompt.size()) + 1) / 2;
    const auto two_chunks = PrefillLogits(*model, prompt, half);
    EXPECT_LT(MaxAbsDiff(one_step, want), 1e-3f) << path;
    EXPECT_LT(MaxAbsDiff(two_chunks, one_step), 1e-5f) << path << ": 2-chunk prefill";
  }
}

TEST(ModelGoldenTest, GgufAndHfGiveTheSameLogits) {
  auto gguf = Load(kGguf);
  auto hf = Load(kHf);
  ASSERT_NE(gguf, nullptr);
  ASSERT_NE(hf, nullptr);
  const std::vector<int32_t> prompt = {1, 291, 280, 294, 262, 294, 353, 265, 284, 294, 426};
  const auto a = PrefillLogits(*gguf, prompt, 0);
  const auto b = PrefillLogits(*hf, prompt, 0);
  ASSERT_EQ(a.size(), prompt.size() * 512);
  EXPECT_LT(MaxAbsDiff(a, b), 1e-4f);
}

TEST(ModelGoldenTest, ModelInfoDescribesStories260k) {
  auto model = Load(kGguf);
  ASSERT_NE(model, nullptr);
  const ModelInfo& info = model->info();
  EXPECT_EQ(info.vocab_size, 512);
  EXPECT_EQ(info.hidden_size, 64);
  EXPECT_EQ(info.num_layers, 5);
  EXPECT_EQ(info.num_heads, 8);
  EXPECT_EQ(info.num_kv_heads, 4);
  EXPECT_EQ(info.head_dim, 8);
  EXPECT_EQ(info.max_position_embeddings, 2048);
  EXPECT_EQ(BytesPerBlock(model->cache_groups(), 16), 5u * 2 * 16 * 4 * 8 * 4);
  auto moe = Load(kMoe);
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(moe->info().num_experts, 8);
  EXPECT_EQ(moe->info().num_experts_per_tok, 4);
}

}  // namespace
}  // namespace model_golden_test
}  // namespace tandem::model

namespace tandem::model {
namespace model_golden_test {
namespace {

// A 16-bit KV cache (--kv-cache-dtype) or 16-bit weights (--dtype) round K/V or weights to
// nearest even: relative error ≤ 2^-11 (float16) / 2^-8 (bfloat16) per element. On stories260K
// the prefill logits move by at most 0.008 (f16 KV), 0.07 (bf16 KV), 0.017 (f16 weights),
// 0.08 (bf16 weights) — bounded below with some room. Greedy ids stay exact for every golden
// case except with bf16 weights, where the 8-bit mantissa of every weight flips a near-tie
// late in the long no-prompt case (as vLLM's bf16 differs from fp32 goldens): for that variant
// only the logit bound is asserted.
TEST(ModelGoldenTest, SixteenBitKvCacheAndWeightsKeepGoldenIds) {
  std::vector<int32_t> prompt;
  std::vector<float> want;
  ASSERT_TRUE(LoadPrefillGolden(&prompt, &want));
  struct Variant {
    const char* kv;
    const char* dtype;
    float logit_bound;
    bool exact_ids;
  };
  for (const Variant& v :
       {Variant{"float16", "auto", 0.02f, true}, Variant{"bfloat16", "auto", 0.1f, true},
        Variant{"auto", "float16", 0.03f, true}, Variant{"auto", "bfloat16", 0.1f, false}}) {
    LoadOptions options;
    options.kv_cache_dtype = v.kv;
    options.dtype = v.dtype;
    auto loaded = LoadModel(kGguf, options);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    Model& model = *loaded.value();
    const std::string what = std::string("kv ") + v.kv + ", dtype " + v.dtype;
    const float diff = MaxAbsDiff(PrefillLogits(model, prompt, 0), want);

    EXPECT_LT(diff, v.logit_bound) << what;
    if (!v.exact_ids) continue;
    for (const GoldenCase& c : LoadCases()) {
      GreedyRunner runner(model, kBos);
      std::vector<Seq> seqs = {MakeSeq(c)};
      runner.Run(seqs, /*chunk=*/0, /*collect_all_logits=*/false);
      EXPECT_EQ(seqs[0].generated, c.generated_ids) << what << ", prompt '" << c.prompt << "'";
    }
  }
}

TEST(ModelGoldenTest, Fp8KvCacheIsRefusedByName) {
  LoadOptions options;
  options.kv_cache_dtype = "fp8_e4m3";
  auto loaded = LoadModel(kGguf, options);
  ASSERT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("--kv-cache-dtype fp8_e4m3"), std::string::npos)
      << loaded.status().message();
}

}  // namespace
}  // namespace model_golden_test
}  // namespace tandem::model
