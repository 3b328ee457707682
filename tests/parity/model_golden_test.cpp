// Model goldens: greedy decode through the paged KV cache reproduces every `generation` case of
// stories260K.golden.json for the GGUF file, the HF folder and the 8x4 MoE GGUF; prefill logits
// match the golden within its stated tolerance; chunked prefill and batching change nothing;
// GGUF and HF layouts give the same logits.
// Golden conventions (run.c): prompt_ids start with BOS=1; positions 0..steps-1 are fed; prompt
// tokens are forced, the rest greedy; generated_ids exclude forced tokens; BOS sampled = stop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/model.h"

namespace tandem::model {
namespace {

const std::string kShared = TANDEM_SHARED_DIR;
const std::string kGguf = kShared + "/models/stories260k/stories260K.gguf";
const std::string kHf = kShared + "/models/stories260k-hf";
const std::string kMoe = kShared + "/models/stories260k-moe-gguf/stories260K-moe8x4.gguf";
constexpr int32_t kBlockSize = 16;
constexpr int32_t kNumBlocks = 64;
constexpr int32_t kBos = 1;

struct GoldenCase {
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  int32_t steps = 0;
  std::vector<int32_t> generated_ids;
};

nlohmann::json LoadGoldenJson() {
  std::ifstream in(kShared + "/models/stories260k/stories260K.golden.json");
  return nlohmann::json::parse(in);
}

std::vector<GoldenCase> LoadCases() {
  std::vector<GoldenCase> cases;
  for (const auto& g : LoadGoldenJson()["generation"]) {
    cases.push_back({g["prompt"], g["prompt_ids"].get<std::vector<int32_t>>(), g["steps"],
                     g["generated_ids"].get<std::vector<int32_t>>()});
  }
  return cases;
}

std::unique_ptr<Model> Load(const std::string& path) {
  auto model = LoadModel(path, LoadOptions{});
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

// One sequence in flight: known tokens (prompt + sampled), how many have K/V, its blocks.
struct Seq {
  std::vector<int32_t> tokens;
  int32_t num_computed = 0;
  int32_t num_to_generate = 0;
  std::vector<int32_t> generated;
  std::vector<int32_t> blocks;
  std::vector<float> logits;  // [rows, vocab] of every computed row when collecting
  bool done = false;
};

// Drives the model like the worker does: every step each unfinished sequence schedules up to
// `chunk` new tokens (all of them when 0); the step that reaches its last known token samples.
// Blocks are handed out from the top of the pool downwards so tables are not the identity.
class GreedyRunner {
 public:
  explicit GreedyRunner(Model& model) : model_(model) {
    kv_.Allocate(model.kv_cache_spec(), kNumBlocks, kBlockSize);
  }

  void Run(std::vector<Seq>& seqs, int32_t chunk, bool collect_all_logits) {
    const int32_t vocab = model_.info().vocab_size;
    while (true) {
      ForwardContext ctx;
      ctx.block_size = kBlockSize;
      ctx.query_start_loc.push_back(0);
      std::vector<Seq*> scheduled;
      std::vector<bool> samples;
      for (Seq& s : seqs) {
        if (s.done) continue;
        const int32_t total = static_cast<int32_t>(s.tokens.size());
        const int32_t end = chunk > 0 ? std::min(total, s.num_computed + chunk) : total;
        while (static_cast<int32_t>(s.blocks.size()) * kBlockSize < end) {
          EXPECT_GT(next_block_, -1) << "test KV pool exhausted";
          s.blocks.push_back(next_block_--);
        }
        const bool sample = end == total;
        for (int32_t pos = s.num_computed; pos < end; ++pos) {
          if (collect_all_logits || (sample && pos == end - 1)) {
            ctx.logits_indices.push_back(ctx.num_tokens());
          }
          ctx.token_ids.push_back(s.tokens[pos]);
          ctx.positions.push_back(pos);
          ctx.slot_mapping.push_back(static_cast<int64_t>(s.blocks[pos / kBlockSize]) * kBlockSize +
                                     pos % kBlockSize);
        }
        ctx.query_start_loc.push_back(ctx.num_tokens());
        ctx.seq_lens.push_back(end);
        ctx.block_tables.push_back(s.blocks);
        scheduled.push_back(&s);
        samples.push_back(sample);
      }
      if (scheduled.empty()) return;
      std::vector<float> logits;
      model_.Forward(ctx, kv_, logits);
      EXPECT_EQ(logits.size(), ctx.logits_indices.size() * vocab);
      size_t logit_row = 0;
      for (size_t i = 0; i < scheduled.size(); ++i) {
        Seq& s = *scheduled[i];
        const int32_t q_len = ctx.query_start_loc[i + 1] - ctx.query_start_loc[i];
        const int32_t rows = collect_all_logits ? q_len : (samples[i] ? 1 : 0);
        if (collect_all_logits) {
          s.logits.insert(s.logits.end(), logits.begin() + logit_row * vocab,
                          logits.begin() + (logit_row + rows) * vocab);
        }
        s.num_computed += q_len;
        if (samples[i]) {
          const float* last = logits.data() + (logit_row + rows - 1) * vocab;
          const int32_t next = static_cast<int32_t>(std::max_element(last, last + vocab) - last);
          if (next == kBos) {
            s.done = true;
          } else {
            s.generated.push_back(next);
            s.tokens.push_back(next);
            s.done = static_cast<int32_t>(s.generated.size()) >= s.num_to_generate;
          }
        }
        logit_row += rows;
      }
    }
  }

 private:
  Model& model_;
  KvCache kv_;
  int32_t next_block_ = kNumBlocks - 1;
};

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
    GreedyRunner runner(*model);
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
      GreedyRunner runner(*model);
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
  GreedyRunner runner(model);
  Seq s;
  s.tokens = prompt;
  s.num_to_generate = 1;
  std::vector<Seq> seqs = {s};
  runner.Run(seqs, chunk, /*collect_all_logits=*/true);
  return seqs[0].logits;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0.0f;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

TEST(ModelGoldenTest, PrefillLogitsMatchGoldenAndChunkedPrefillIsIdentical) {
  const auto golden = LoadGoldenJson();
  const nlohmann::json* with_logits = nullptr;
  for (const auto& g : golden["generation"]) {
    if (g.contains("prefill_logits")) with_logits = &g;
  }
  ASSERT_NE(with_logits, nullptr);
  const auto prompt = (*with_logits)["prompt_ids"].get<std::vector<int32_t>>();
  std::vector<float> want;
  for (const auto& row : (*with_logits)["prefill_logits"]) {
    for (float v : row.get<std::vector<float>>()) want.push_back(v);
  }
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
  EXPECT_EQ(model->kv_cache_spec().BytesPerBlock(16), 5u * 2 * 16 * 4 * 8 * 4);
  auto moe = Load(kMoe);
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(moe->info().num_experts, 8);
  EXPECT_EQ(moe->info().num_experts_per_tok, 4);
}

}  // namespace
}  // namespace tandem::model
