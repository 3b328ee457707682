// The Qwen3.5 MTP head against tiny-qwen3.5-moe's golden MTP drafts: along each golden greedy
// path (teacher-forced), the draft for generated token j comes from the trunk's final-normed
// hidden state at the position before the previous token and that previous token; its argmax
// must equal golden.json invariants.mtp draft_ids_vllm_convention (numpy reference; llama.cpp
// agrees under its own convention).
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

#include "common/golden_json.h"
#include "kernels/backend.h"
#include "model/arch/qwen35.h"
#include "model/decoder_model.h"
#include "model/loader/safetensors_reader.h"
#include "model/model.h"
#include "testing.h"

namespace tandem::model {
namespace qwen35_mtp_test {
namespace {

using golden_files::LoadGoldenJson;
using golden_files::RequireCases;

const std::string kDir = std::string(TANDEM_SHARED_DIR) + "/models/tiny-qwen3.5-moe";
const std::string kGolden = kDir + "/golden.json";

// One sequence of `num_tokens` rows at positions 0..num_tokens-1 in blocks 0, 1, ...
ForwardContext Prefill(const std::vector<int32_t>& tokens, int32_t num_blocks) {
  ForwardContext ctx;
  ctx.block_size = testing::kBlockSize;
  ctx.token_ids = tokens;
  for (int32_t p = 0; p < static_cast<int32_t>(tokens.size()); ++p) {
    ctx.positions.push_back(p);
    ctx.slot_mapping.push_back(p);
  }
  ctx.query_start_loc = {0, static_cast<int32_t>(tokens.size())};
  ctx.seq_lens = {static_cast<int32_t>(tokens.size())};
  std::vector<int32_t> table(num_blocks);
  std::iota(table.begin(), table.end(), 0);
  ctx.block_tables = {table};
  ctx.state_slots = {0};
  return ctx;
}

TEST(Qwen35MtpTest, FirstDraftsAlongEveryGoldenPathEqualTheReference) {
  const nlohmann::json golden = LoadGoldenJson(kGolden);
  const nlohmann::json& mtp_cases = RequireCases(golden, "invariants.mtp.cases", kGolden);
  const nlohmann::json& cases = RequireCases(golden, "cases", kGolden);
  auto model = LoadModel(kDir, LoadOptions{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto* trunk = dynamic_cast<DecoderModel*>(model->get());
  ASSERT_NE(trunk, nullptr);
  auto config = Qwen35ConfigFromHf(kDir);
  ASSERT_TRUE(config.ok());
  auto checkpoint = SafetensorsCheckpoint::Open(kDir);
  ASSERT_TRUE(checkpoint.ok());
  auto mtp = LoadQwen35Mtp(*config, **checkpoint);
  ASSERT_TRUE(mtp.ok()) << mtp.status().ToString();
  const int32_t vocab = (*model)->info().vocab_size;
  int num_cases = 0;
  for (const auto& expected : mtp_cases) {
    const nlohmann::json* found = nullptr;
    for (const auto& c : cases) {
      if (c["name"] == expected["name"]) found = &c;
    }
    if (found == nullptr) continue;  // a case kept aside (not in this folder)
    std::vector<int32_t> seq = (*found)["prompt_ids"].get<std::vector<int32_t>>();
    const int32_t prompt_len = static_cast<int32_t>(seq.size());
    for (int32_t id : (*found)["generated_ids"].get<std::vector<int32_t>>()) seq.push_back(id);
    seq.pop_back();  // the last token's hidden state predicts nothing compared here
    const int32_t n = static_cast<int32_t>(seq.size());
    const int32_t num_blocks = n / testing::kBlockSize + 1;
    KvCache kv;
    kv.Allocate((*model)->cache_groups(), num_blocks, testing::kBlockSize, 1);
    ForwardContext ctx = Prefill(seq, num_blocks);
    ctx.logits_indices = {n - 1};
    std::vector<float> logits, hidden;
    (*model)->Forward(ctx, kv, logits);
    trunk->FinalNormedHidden(&hidden);
    // MTP row p pairs h_p with x_{p+1}; the draft for generated token j (j >= 1) is row
    // prompt_len + j - 2.
    std::vector<int32_t> next(seq.begin() + 1, seq.end());
    next.push_back((*found)["generated_ids"].back().get<int32_t>());
    KvCache head_kv;
    head_kv.Allocate({PagedKvGroup({0}, (*model)->info().num_kv_heads, (*model)->info().head_dim)},
                     num_blocks, testing::kBlockSize);
    LayerCache cache = head_kv.ForLayer(0);
    const auto want = expected["draft_ids_vllm_convention"].get<std::vector<int32_t>>();
    ForwardContext head_ctx = ctx;
    head_ctx.logits_indices.clear();
    for (size_t j = 1; j <= want.size(); ++j) {
      head_ctx.logits_indices.push_back(prompt_len + static_cast<int32_t>(j) - 2);
    }
    std::vector<float> head_hidden, head_logits;
    const std::unique_ptr<kernels::Stream> stream = kernels::CpuBackend().CreateStream();
    tensor::DeviceArena activations(kernels::CpuBackend().allocator(), "activations");
    (*mtp)->Forward(*stream, activations, head_ctx, next.data(), hidden.data(), trunk->embedding(),
                    trunk->lm_head(), vocab, cache, head_hidden, head_logits);
    for (size_t j = 0; j < want.size(); ++j) {
      const auto row = std::span<const float>(head_logits).subspan(j * vocab, vocab);
      const int32_t draft =
          static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
      EXPECT_EQ(draft, want[j]) << expected["name"] << " draft for generated token " << j + 1;
    }
    ++num_cases;
  }
  EXPECT_GE(num_cases, 4);
}

}  // namespace
}  // namespace qwen35_mtp_test
}  // namespace tandem::model
