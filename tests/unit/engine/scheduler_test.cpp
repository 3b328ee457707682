#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include "testing.h"

namespace tandem::engine {
namespace {

using protocol::FinishReason;
using protocol::StepPlan;
using testing::Iota;
using testing::MakeConfig;
using testing::MakeRequest;
using testing::MakeResult;

// Schedules one step and answers it with `token_id` for every request whose tokens are all
// computed after the step (-1 for partial prefills), like a worker would.
std::vector<protocol::EngineOutput> RunStep(Scheduler& scheduler, int32_t token_id,
                                            StepPlan* plan_out = nullptr) {
  StepPlan plan = scheduler.Schedule();
  std::vector<std::string> partial;
  for (size_t i = 0; i < plan.scheduled_request_ids.size(); ++i) {
    const Request* request = scheduler.FindRequest(plan.scheduled_request_ids[i]);
    if (request->num_computed_tokens + plan.num_scheduled_tokens[i] < request->num_tokens()) {
      partial.push_back(plan.scheduled_request_ids[i]);
    }
  }
  std::vector<protocol::EngineOutput> outputs =
      scheduler.UpdateFromOutput(plan, MakeResult(plan, token_id, partial));
  if (plan_out != nullptr) *plan_out = std::move(plan);
  return outputs;
}

TEST(SchedulerTest, ChunkedPrefillSplitsALongPromptByTheTokenBudget) {
  Scheduler scheduler(MakeConfig(/*num_gpu_blocks=*/64, /*max_num_batched_tokens=*/16));
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(40))).ok());
  StepPlan plan;
  EXPECT_TRUE(RunStep(scheduler, 7, &plan).empty());
  ASSERT_EQ(plan.new_requests.size(), 1u);
  EXPECT_EQ(plan.new_requests[0].token_ids, Iota(40));
  EXPECT_EQ(plan.new_requests[0].block_ids.size(), 4u);  // 16 tokens / 4 per block
  EXPECT_EQ(plan.num_scheduled_tokens, std::vector<int32_t>{16});

  EXPECT_TRUE(RunStep(scheduler, 7, &plan).empty());
  ASSERT_EQ(plan.cached_requests.size(), 1u);
  EXPECT_EQ(plan.cached_requests[0].num_computed_tokens, 16);
  EXPECT_EQ(plan.cached_requests[0].new_block_ids.size(), 4u);
  EXPECT_EQ(plan.num_scheduled_tokens, std::vector<int32_t>{16});

  std::vector<protocol::EngineOutput> outputs = RunStep(scheduler, 7, &plan);
  EXPECT_EQ(plan.num_scheduled_tokens, std::vector<int32_t>{8});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].new_token_ids, std::vector<int32_t>{7});
  EXPECT_EQ(scheduler.FindRequest("a")->num_computed_tokens, 40);
}

TEST(SchedulerTest, RunningRequestsFirstThenWaitingOnesShareTheRestOfTheBudget) {
  Scheduler scheduler(MakeConfig(64, /*max_num_batched_tokens=*/10));
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(4))).ok());
  RunStep(scheduler, 7);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(20, 100))).ok());
  StepPlan plan;
  RunStep(scheduler, 7, &plan);
  // New requests come first in batch order, cached (running) ones after.
  EXPECT_EQ(plan.scheduled_request_ids, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(plan.num_scheduled_tokens, (std::vector<int32_t>{9, 1}));
}

TEST(SchedulerTest, LongPrefillThresholdCapsOneRequestsChunk) {
  SchedulerConfig config = MakeConfig(64, 64);
  config.long_prefill_token_threshold = 12;
  Scheduler scheduler(config);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(30))).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(30, 100))).ok());
  StepPlan plan;
  RunStep(scheduler, 7, &plan);
  EXPECT_EQ(plan.num_scheduled_tokens, (std::vector<int32_t>{12, 12}));
}

TEST(SchedulerTest, MaxNumSeqsBoundsTheRunningRequests) {
  Scheduler scheduler(MakeConfig(64, 64, /*max_num_seqs=*/2));
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(4), /*max_tokens=*/1)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(4, 10), 3)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("c", Iota(4, 20), 3)).ok());
  StepPlan plan;
  RunStep(scheduler, 7, &plan);  // a finishes (max_tokens 1)
  EXPECT_EQ(plan.scheduled_request_ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(scheduler.num_waiting(), 1);
  RunStep(scheduler, 7, &plan);
  EXPECT_EQ(plan.scheduled_request_ids, (std::vector<std::string>{"c", "b"}));
  EXPECT_EQ(plan.finished_request_ids, std::vector<std::string>{"a"});
  EXPECT_EQ(scheduler.num_running(), 2);
}

TEST(SchedulerTest, StatsWeighEachRequestByPromptPlusMaxTokensUntilItFinishes) {
  Scheduler scheduler(MakeConfig(64, 64, /*max_num_seqs=*/2));
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(4), /*max_tokens=*/1)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(4, 10), 3)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("c", Iota(5, 20), 9)).ok());
  EXPECT_EQ(scheduler.MakeStats().num_held_tokens, (4 + 1) + (4 + 3) + (5 + 9));
  RunStep(scheduler, 7);  // a finishes; b has 1 of its 3 tokens, c waits for a slot
  EXPECT_EQ(scheduler.MakeStats().num_held_tokens, (4 + 3) + (5 + 9))
      << "b weighs its whole size, not what remains";
  scheduler.AbortRequests({"c"});
  EXPECT_EQ(scheduler.MakeStats().num_held_tokens, 4 + 3);
  RunStep(scheduler, 7);
  RunStep(scheduler, 7);  // b finishes
  EXPECT_EQ(scheduler.MakeStats().num_held_tokens, 0);
}

TEST(SchedulerTest, StatsCountTheStateSlotsOfRunningRequests) {
  SchedulerConfig config = MakeConfig(64, 64, /*max_num_seqs=*/2);
  EXPECT_EQ(Scheduler(config).MakeStats().num_state_slots, 0) << "no state group by default";
  config.num_state_slots = 2;  // a hybrid model: one slot per running request
  Scheduler scheduler(config);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(4), /*max_tokens=*/1)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(4, 10), 3)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("c", Iota(5, 20), 9)).ok());
  EXPECT_EQ(scheduler.MakeStats().num_state_slots_used, 0) << "waiting requests hold none";
  StepPlan plan = scheduler.Schedule();  // a and b run; c waits for a slot
  EXPECT_EQ(plan.new_requests.size(), 2u);
  protocol::EngineStats stats = scheduler.MakeStats();
  EXPECT_EQ(stats.num_state_slots, 2);
  EXPECT_EQ(stats.num_state_slots_used, 2);
  scheduler.AbortRequests({"a", "b", "c"});
  EXPECT_EQ(scheduler.MakeStats().num_state_slots_used, 0);
}

// The cache manager coordinates both cache groups: a request is admitted only with a state
// slot, the plan names it, and a finished request's slot goes to the next one.
TEST(SchedulerTest, StateSlotsLimitAdmissionAndTravelInThePlan) {
  SchedulerConfig config = MakeConfig(64, 64, /*max_num_seqs=*/3);
  config.num_state_slots = 2;  // fewer slots than sequences: the slots are the limit
  Scheduler scheduler(config);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(4), /*max_tokens=*/1)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(4, 10), 3)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("c", Iota(5, 20), 9)).ok());
  StepPlan plan;
  RunStep(scheduler, 7, &plan);  // a and b run (a finishes); c waits for a slot
  ASSERT_EQ(plan.new_requests.size(), 2u);
  EXPECT_EQ(plan.new_requests[0].request_id, "a");
  EXPECT_EQ(plan.new_requests[0].state_slot, 0);
  EXPECT_EQ(plan.new_requests[1].state_slot, 1);
  EXPECT_EQ(scheduler.MakeStats().num_state_slots_used, 1);
  RunStep(scheduler, 7, &plan);  // c takes a's slot
  ASSERT_EQ(plan.new_requests.size(), 1u);
  EXPECT_EQ(plan.new_requests[0].request_id, "c");
  EXPECT_EQ(plan.new_requests[0].state_slot, 0);
  EXPECT_EQ(scheduler.MakeStats().num_state_slots_used, 2);
  // Without a state group no request carries a slot.
  Scheduler plain(MakeConfig(64, 64, 2));
  ASSERT_TRUE(plain.AddRequest(MakeRequest("d", Iota(4), 1)).ok());
  RunStep(plain, 7, &plan);
  ASSERT_EQ(plan.new_requests.size(), 1u);
  EXPECT_EQ(plan.new_requests[0].state_slot, -1);
}

TEST(SchedulerTest, PreemptsTheNewestRequestAndResumesItWithAllItsTokens) {
  // 6 blocks of 4 tokens; two requests of 8 prompt + up to 12 generated tokens cannot both
  // reach 13 tokens (4 blocks each).
  Scheduler scheduler(MakeConfig(/*num_gpu_blocks=*/6, 64, 16, /*max_model_len=*/24));
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(8), 12)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(8, 100), 12)).ok());
  StepPlan plan;
  int steps = 0;
  while (scheduler.num_preemptions() == 0 && steps++ < 20) RunStep(scheduler, 7, &plan);
  ASSERT_EQ(scheduler.num_preemptions(), 1);
  EXPECT_EQ(plan.scheduled_request_ids, std::vector<std::string>{"a"});
  EXPECT_EQ(plan.finished_request_ids, std::vector<std::string>{"b"});
  const Request* b = scheduler.FindRequest("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->status, RequestStatus::kPreempted);
  EXPECT_EQ(b->num_computed_tokens, 0);
  const std::vector<int32_t> b_tokens = b->all_token_ids();
  EXPECT_EQ(b_tokens.size(), 13u);  // 8 prompt + 5 generated before the preemption

  // a runs to completion, then b comes back as a new request carrying every token.
  bool resumed = false;
  while (!resumed && steps++ < 40) {
    RunStep(scheduler, 7, &plan);
    for (const protocol::NewRequestData& data : plan.new_requests) {
      if (data.request_id != "b") continue;
      resumed = true;
      EXPECT_EQ(data.token_ids, b_tokens);
      EXPECT_EQ(data.num_prompt_tokens, 8);
      EXPECT_EQ(data.num_computed_tokens % 4, 0);
      EXPECT_LT(data.num_computed_tokens, 13);
    }
  }
  EXPECT_TRUE(resumed);
  EXPECT_EQ(scheduler.FindRequest("a"), nullptr);  // finished
}

TEST(SchedulerTest, SharedPrefixIsServedFromTheCache) {
  Scheduler scheduler(MakeConfig());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(10), 4)).ok());
  RunStep(scheduler, 7);
  std::vector<int32_t> prompt = Iota(9);
  prompt.push_back(300);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", prompt, 4)).ok());
  StepPlan plan;
  std::vector<protocol::EngineOutput> outputs = RunStep(scheduler, 7, &plan);
  ASSERT_EQ(plan.new_requests.size(), 1u);
  EXPECT_EQ(plan.new_requests[0].num_computed_tokens, 8);
  EXPECT_EQ(plan.num_scheduled_tokens[0], 2);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].request_id, "b");
  EXPECT_EQ(outputs[0].num_cached_tokens, 8);
  protocol::EngineStats stats = scheduler.MakeStats();
  EXPECT_EQ(stats.prefix_cache_queries, 20);
  EXPECT_EQ(stats.prefix_cache_hits, 8);
}

TEST(SchedulerTest, PrefixCacheQueriesStayZeroWithCachingOff) {
  SchedulerConfig config = MakeConfig();
  config.enable_prefix_caching = false;
  Scheduler scheduler(config);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(10), 4)).ok());
  RunStep(scheduler, 7);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(10), 4)).ok());
  RunStep(scheduler, 7);
  const protocol::EngineStats stats = scheduler.MakeStats();
  EXPECT_EQ(stats.prefix_cache_queries, 0) << "vLLM counts no queries with caching off";
  EXPECT_EQ(stats.prefix_cache_hits, 0);
}

// vLLM's iteration_tokens_total: per step that gave tokens, the tokens given plus the prompts
// of the requests that got their first token; partial-prefill steps give nothing.
TEST(SchedulerTest, StepsThatGiveTokensAreCountedInTheIterationTokensHistogram) {
  Scheduler scheduler(MakeConfig(64, /*max_num_batched_tokens=*/16));
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(40), /*max_tokens=*/3)).ok());
  EXPECT_TRUE(RunStep(scheduler, 7).empty());  // 16 prompt tokens
  EXPECT_TRUE(RunStep(scheduler, 7).empty());  // 16 more
  EXPECT_TRUE(scheduler.MakeStats().iteration_tokens_buckets.empty());
  EXPECT_EQ(RunStep(scheduler, 7).size(), 1u);  // the last 8 + a's first token: 40 + 1
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(4, 100), /*max_tokens=*/2)).ok());
  EXPECT_EQ(RunStep(scheduler, 7).size(), 2u);  // a's 2nd token + b's prompt and 1st: 1 + 4 + 1
  EXPECT_EQ(RunStep(scheduler, 7).size(), 2u);  // a's 3rd, b's 2nd: 2
  EXPECT_FALSE(scheduler.HasUnfinishedRequests());
  const protocol::EngineStats stats = scheduler.MakeStats();
  // Bounds 1, 8, 16, 32, 64, ...: 6 and 2 in (1, 8], 41 in (32, 64].
  std::vector<int64_t> expected(protocol::kNumIterationTokensBuckets + 1, 0);
  expected[1] = 2;
  expected[4] = 1;
  EXPECT_EQ(stats.iteration_tokens_buckets, expected);
  EXPECT_EQ(stats.iteration_tokens_sum, 41 + 6 + 2);
}

TEST(SchedulerTest, FirstOutputCarriesTheEngineTimesOfQueueingAndFirstScheduling) {
  Scheduler scheduler(MakeConfig());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(6), /*max_tokens=*/2)).ok());
  const std::vector<protocol::EngineOutput> first = RunStep(scheduler, 7);
  const std::vector<protocol::EngineOutput> second = RunStep(scheduler, 7);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_GT(first[0].queued_time_s, 0.0);
  EXPECT_GE(first[0].scheduled_time_s, first[0].queued_time_s);
  EXPECT_GE(first[0].timestamp_s, first[0].scheduled_time_s);
  EXPECT_EQ(second[0].queued_time_s, 0.0) << "the first output only";
  EXPECT_EQ(second[0].scheduled_time_s, 0.0);
  EXPECT_GE(second[0].timestamp_s, first[0].timestamp_s);
}

TEST(SchedulerTest, AbortFreesBlocksAndTellsTheWorkers) {
  Scheduler scheduler(MakeConfig());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(10))).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(10, 50))).ok());
  RunStep(scheduler, 7);
  EXPECT_GT(scheduler.kv_cache_manager().Usage(), 0.0f);
  std::vector<protocol::EngineOutput> outputs = scheduler.AbortRequests({"a", "unknown"});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].finish_reason, static_cast<uint8_t>(FinishReason::kAbort));
  EXPECT_EQ(scheduler.kv_cache_manager().block_pool().num_free_blocks(), 64 - 3);
  StepPlan plan;
  RunStep(scheduler, 7, &plan);
  EXPECT_EQ(plan.finished_request_ids, std::vector<std::string>{"a"});
  scheduler.AbortRequests({"b"});
  EXPECT_FLOAT_EQ(scheduler.kv_cache_manager().Usage(), 0.0f);
  EXPECT_FALSE(scheduler.HasUnfinishedRequests());
}

TEST(SchedulerTest, AbortOfAWaitingRequestRemovesItFromTheQueue) {
  Scheduler scheduler(MakeConfig());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(10))).ok());
  EXPECT_EQ(scheduler.AbortRequests({"a"}).size(), 1u);
  EXPECT_EQ(scheduler.num_waiting(), 0);
  EXPECT_TRUE(scheduler.Schedule().scheduled_request_ids.empty());
}

TEST(SchedulerTest, RejectsRequestsThatCannotFitOrAreMalformed) {
  Scheduler scheduler(MakeConfig(64, 64, 16, /*max_model_len=*/32));
  Status too_long = scheduler.AddRequest(MakeRequest("a", Iota(30), /*max_tokens=*/3));
  EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.message().find("maximum context length is 32"), std::string::npos);
  EXPECT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(30), 2)).ok());  // exactly 32
  EXPECT_EQ(scheduler.AddRequest(MakeRequest("a", Iota(3))).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler.AddRequest(MakeRequest("e", {})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler.AddRequest(MakeRequest("m", Iota(3), 0)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler.AddRequest(MakeRequest("n", {1, -5})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scheduler.num_waiting(), 1);
}

TEST(SchedulerConfigTest, RejectsAMaxModelLenTheKvCacheCannotHold) {
  SchedulerConfig config = MakeConfig(/*num_gpu_blocks=*/4, 64, 16, /*max_model_len=*/17);
  Status status = config.Validate();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("max_model_len 17"), std::string::npos);
  EXPECT_TRUE(MakeConfig(4, 64, 16, 16).Validate().ok());
  SchedulerConfig zero = MakeConfig();
  zero.max_num_seqs = 0;
  EXPECT_NE(zero.Validate().message().find("max_num_seqs"), std::string::npos);
}

}  // namespace
}  // namespace tandem::engine
