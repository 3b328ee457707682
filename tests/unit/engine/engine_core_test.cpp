#include "engine/engine_core.h"

#include <gtest/gtest.h>

#include <map>

#include "testing.h"

namespace tandem::engine {
namespace {

using protocol::FinishReason;
using testing::FakeExecutor;
using testing::Iota;
using testing::MakeConfig;
using testing::MakeRequest;

struct Collected {
  std::vector<int32_t> token_ids;
  uint8_t finish_reason = 0;
  int32_t num_cached_tokens = -1;  // from the first output
  int num_outputs = 0;
  std::string error;
};

// Steps `core` until it has no work; gathers every request's outputs.
std::map<std::string, Collected> RunToCompletion(EngineCore& core, int max_steps = 500) {
  std::map<std::string, Collected> collected;
  for (int step = 0; core.HasWork() && step < max_steps; ++step) {
    for (const protocol::EngineOutput& output : core.Step().outputs) {
      Collected& c = collected[output.request_id];
      EXPECT_EQ(c.finish_reason, 0) << output.request_id << " got an output after finishing";
      if (c.num_outputs++ == 0) c.num_cached_tokens = output.num_cached_tokens;
      c.token_ids.insert(c.token_ids.end(), output.new_token_ids.begin(),
                         output.new_token_ids.end());
      c.finish_reason = output.finish_reason;
      c.error = output.error;
    }
  }
  EXPECT_FALSE(core.HasWork());
  return collected;
}

std::unique_ptr<EngineCore> MakeCore(const SchedulerConfig& config, FakeExecutor** fake) {
  auto executor = std::make_unique<FakeExecutor>(config.num_gpu_blocks, config.block_size);
  *fake = executor.get();
  return std::make_unique<EngineCore>(config, std::move(executor), /*dp_rank=*/1);
}

TEST(EngineCoreTest, StatsSeqGrowsWithEveryBatchOfOutputs) {
  FakeExecutor* fake;
  auto core = MakeCore(MakeConfig(), &fake);
  EXPECT_EQ(core->Stats().seq, 0);
  ASSERT_TRUE(core->AddRequest(MakeRequest("a", Iota(4), /*max_tokens=*/2)).ok());
  const protocol::EngineOutputs first = core->Step();
  const protocol::EngineOutputs second = core->Step();
  core->AbortRequests({"none"});
  const protocol::EngineOutputs pending = core->TakePendingOutputs();
  EXPECT_EQ(first.stats.seq, 1);
  EXPECT_EQ(second.stats.seq, 2);
  EXPECT_EQ(pending.stats.seq, 3);
  EXPECT_EQ(core->Stats().seq, 3) << "asking for the stats alone does not move it";
}

TEST(EngineCoreTest, GeneratesTheFakeModelsTokensUntilMaxTokens) {
  FakeExecutor* fake;
  auto core = MakeCore(MakeConfig(64, /*max_num_batched_tokens=*/8), &fake);
  ASSERT_TRUE(core->AddRequest(MakeRequest("a", Iota(20), /*max_tokens=*/5)).ok());
  std::map<std::string, Collected> out = RunToCompletion(*core);
  EXPECT_EQ(out["a"].token_ids, Iota(5, 20));  // 20, 21, ... after the prompt 0..19
  EXPECT_EQ(out["a"].finish_reason, static_cast<uint8_t>(FinishReason::kLength));
  EXPECT_EQ(out["a"].num_cached_tokens, 0);
  EXPECT_EQ(fake->plans.size(), 3u + 4u);  // 20-token prompt in chunks of 8, then 4 decodes
  protocol::EngineStats stats = core->Stats();
  EXPECT_EQ(stats.dp_rank, 1);
  EXPECT_EQ(stats.num_running, 0);
  EXPECT_FLOAT_EQ(stats.kv_cache_usage, 0.0f);
}

TEST(EngineCoreTest, StopsOnEosAndReportsCachedPrefixOnTheFirstOutput) {
  FakeExecutor* fake;
  auto core = MakeCore(MakeConfig(), &fake);
  protocol::EngineRequest first = MakeRequest("a", Iota(12), 10);
  first.eos_token_ids = {14};  // the fake model emits 12, 13, 14
  ASSERT_TRUE(core->AddRequest(first).ok());
  std::map<std::string, Collected> out = RunToCompletion(*core);
  EXPECT_EQ(out["a"].token_ids, (std::vector<int32_t>{12, 13, 14}));
  EXPECT_EQ(out["a"].finish_reason, static_cast<uint8_t>(FinishReason::kStop));

  ASSERT_TRUE(core->AddRequest(MakeRequest("b", Iota(12), 2)).ok());
  out = RunToCompletion(*core);
  EXPECT_EQ(out["b"].num_cached_tokens, 8);  // 2 of 3 full blocks: the last token is computed
  EXPECT_EQ(out["b"].token_ids, (std::vector<int32_t>{12, 13}));
  EXPECT_EQ(core->Stats().prefix_cache_hits, 8);
}

TEST(EngineCoreTest, PreemptedRequestsFinishWithTheSameTokens) {
  // 10 blocks x 4 tokens for 4 requests that each grow to 24 tokens: preemption is certain.
  // The fake worker checks every computed position's KV, so a wrong resume would fail here.
  FakeExecutor* fake;
  auto core = MakeCore(MakeConfig(/*num_gpu_blocks=*/10, 32, 16, /*max_model_len=*/32), &fake);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(core->AddRequest(MakeRequest("r" + std::to_string(i), Iota(8, 100 * i), 16)).ok());
  }
  std::map<std::string, Collected> out = RunToCompletion(*core);
  EXPECT_GT(core->Stats().num_preemptions, 0);
  for (int i = 0; i < 4; ++i) {
    const Collected& c = out["r" + std::to_string(i)];
    EXPECT_EQ(c.token_ids, Iota(16, 100 * i + 8)) << "r" << i;
    EXPECT_EQ(c.finish_reason, static_cast<uint8_t>(FinishReason::kLength));
  }
  EXPECT_FLOAT_EQ(core->Stats().kv_cache_usage, 0.0f);
}

TEST(EngineCoreTest, AbortOutputComesWithTheNextStep) {
  FakeExecutor* fake;
  auto core = MakeCore(MakeConfig(), &fake);
  ASSERT_TRUE(core->AddRequest(MakeRequest("a", Iota(4), 20)).ok());
  core->Step();
  core->AbortRequests({"a"});
  EXPECT_TRUE(core->HasWork());
  protocol::EngineOutputs outputs = core->Step();
  ASSERT_EQ(outputs.outputs.size(), 1u);
  EXPECT_EQ(outputs.outputs[0].finish_reason, static_cast<uint8_t>(FinishReason::kAbort));
  EXPECT_FALSE(core->HasWork());
  EXPECT_EQ(outputs.stats.kv_cache_usage, 0.0f);
}

TEST(EngineCoreTest, ExecutorFailureFailsTheStepsRequestsOnly) {
  FakeExecutor* fake;
  auto core = MakeCore(MakeConfig(), &fake);
  ASSERT_TRUE(core->AddRequest(MakeRequest("a", Iota(4), 3)).ok());
  fake->fail_next_step = true;
  protocol::EngineOutputs outputs = core->Step();
  ASSERT_EQ(outputs.outputs.size(), 1u);
  EXPECT_EQ(outputs.outputs[0].finish_reason, static_cast<uint8_t>(FinishReason::kError));
  EXPECT_NE(outputs.outputs[0].error.find("fake forward failed"), std::string::npos);
  // The engine keeps serving.
  ASSERT_TRUE(core->AddRequest(MakeRequest("b", Iota(4, 50), 2)).ok());
  std::map<std::string, Collected> out = RunToCompletion(*core);
  EXPECT_EQ(out["b"].token_ids, (std::vector<int32_t>{54, 55}));
}

TEST(EngineCoreTest, LogprobsArePassedThroughWhenRequested) {
  FakeExecutor* fake;
  auto core = MakeCore(MakeConfig(), &fake);
  protocol::EngineRequest with = MakeRequest("with", Iota(4), 1);
  with.sampling.logprobs = 0;
  ASSERT_TRUE(core->AddRequest(with).ok());
  ASSERT_TRUE(core->AddRequest(MakeRequest("without", Iota(4), 1)).ok());
  protocol::EngineOutputs outputs = core->Step();
  ASSERT_EQ(outputs.outputs.size(), 2u);
  ASSERT_EQ(outputs.outputs[0].new_logprobs.size(), 1u);
  EXPECT_EQ(outputs.outputs[0].new_logprobs[0].sampled.token_id, 4);
  EXPECT_TRUE(outputs.outputs[1].new_logprobs.empty());
}

}  // namespace
}  // namespace tandem::engine
