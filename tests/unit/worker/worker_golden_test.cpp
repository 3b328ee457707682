// The real stories260k model through Worker::ExecuteStep: three golden prompts in one batch,
// prefilled in chunks of 3 tokens next to each other's decodes, greedy, reproduce the
// generated ids of stories260K.golden.json (produced by an independent numpy llama2.c).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "common/golden_json.h"
#include "testing.h"
#include "worker/worker.h"

namespace tandem::worker {
namespace {

constexpr int32_t kBlockSize = 4;
constexpr int32_t kBlocksPerSeq = 16;  // 64 tokens each
constexpr int32_t kChunkTokens = 3;

// The engine's side of one request, as a tiny scheduler would keep it.
struct EngineSeq {
  std::string id;
  std::vector<int32_t> tokens;
  int32_t num_prompt_tokens = 0;
  int32_t num_computed_tokens = 0;
  std::vector<int32_t> expected;  // golden generated ids
  std::vector<int32_t> generated;
  bool sent = false;
};

TEST(WorkerGoldenTest, BatchedChunkedGreedyDecodeMatchesStories260kGolden) {
  const std::string shared = TANDEM_SHARED_DIR;
  const std::string golden_path = shared + "/models/stories260k/stories260K.golden.json";
  const nlohmann::json golden = golden_files::LoadGoldenJson(golden_path);
  model::LoadOptions options;
  options.num_threads = 1;  // tiny model: threads would only add overhead
  auto model = model::LoadModel(shared + "/models/stories260k/stories260K.gguf", options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Worker worker(std::move(model).value(), {/*num_kv_blocks=*/64, kBlockSize, 0, -1});

  std::vector<EngineSeq> seqs;
  for (const auto& g : golden_files::RequireCases(golden, "generation", golden_path)) {
    const auto prompt = g["prompt_ids"].get<std::vector<int32_t>>();
    if (prompt.size() < 2) continue;  // the empty prompt needs 200 steps; the others suffice
    EngineSeq seq;
    seq.id = "r" + std::to_string(seqs.size());
    seq.tokens = prompt;
    seq.num_prompt_tokens = static_cast<int32_t>(prompt.size());
    seq.expected = g["generated_ids"].get<std::vector<int32_t>>();
    seqs.push_back(seq);
  }
  ASSERT_EQ(seqs.size(), 3u);

  std::vector<std::string> just_finished;
  size_t num_finished = 0;
  for (int64_t step = 0; num_finished < seqs.size(); ++step) {
    ASSERT_LT(step, 200) << "no progress";
    protocol::StepPlan plan;
    plan.step_id = step;
    plan.finished_request_ids = std::exchange(just_finished, {});
    for (size_t i = 0; i < seqs.size(); ++i) {
      EngineSeq& seq = seqs[i];
      if (seq.generated.size() == seq.expected.size()) continue;
      const int32_t num_tokens =
          std::min<int32_t>(kChunkTokens, seq.tokens.size() - seq.num_computed_tokens);
      if (!seq.sent) {
        std::vector<int32_t> blocks;
        for (int32_t b = 0; b < kBlocksPerSeq; ++b) blocks.push_back(i * kBlocksPerSeq + b);
        plan.new_requests.push_back(testing::NewRequest(seq.id, seq.tokens, blocks));
        seq.sent = true;
      } else {
        plan.cached_requests.push_back(testing::Cached(seq.id, seq.num_computed_tokens));
      }
      testing::Schedule(plan, seq.id, num_tokens);
    }
    Result<protocol::StepResult> result = worker.ExecuteStep(plan);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    for (size_t k = 0; k < result->request_ids.size(); ++k) {
      EngineSeq& seq = seqs[std::stoi(result->request_ids[k].substr(1))];
      seq.num_computed_tokens += plan.num_scheduled_tokens[k];
      const int32_t token = testing::FirstTokens(*result)[k];
      if (token < 0) continue;
      seq.tokens.push_back(token);
      seq.generated.push_back(token);
      if (seq.generated.size() == seq.expected.size()) {
        just_finished.push_back(seq.id);
        ++num_finished;
      }
    }
  }
  for (const EngineSeq& seq : seqs) EXPECT_EQ(seq.generated, seq.expected) << seq.id;
}

}  // namespace
}  // namespace tandem::worker
