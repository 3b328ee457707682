#include "server/openai/generation.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "testing.h"

namespace tandem::server::openai {
namespace {

// A client that leaves while its request waits for a preprocessing thread fires Abort() before
// Start(): nothing may go on running in the engine for it.
TEST(GenerationTest, AbortBeforeStartLeavesNothingRunningInTheEngine) {
  auto engine = std::make_shared<testing::FakeEngineClient>(/*step_ms=*/20);
  ServerContext context;
  context.config.served_model_names = {"m"};
  context.engine = engine;
  context.tokenizer = std::make_shared<testing::FakeTokenizer>();
  GenerationRequest request;
  request.n = 4;
  request.sampling.max_tokens = 1000;
  request.sampling.ignore_eos = true;
  Generation::Callbacks callbacks;
  callbacks.on_delta = [](const ChoiceDelta&) {};
  callbacks.on_done = [](const GenerationUsage&) {};
  callbacks.on_error = [](const ApiError&) {};
  auto generation = std::make_shared<Generation>(
      context, "cmpl-gone", std::vector<int32_t>{1, 2, 3}, request, 0.0, callbacks);
  generation->Abort();
  ASSERT_TRUE(generation->Start().ok());
  EXPECT_EQ(engine->num_running(), 0u);
  EXPECT_LE(engine->added().size(), 1u) << "choices added after the abort";
}

// The engine's times (the fake's clock: queued 100 s, scheduled 100.5 s, token k at 100 + k s)
// become the request's queue / prefill / decode / inference times, under the DP rank that
// served it.
TEST(GenerationTest, FinishedRequestIsObservedWithTheEnginesTimesUnderItsDpRank) {
  auto engine = std::make_shared<testing::FakeEngineClient>(/*step_ms=*/1);
  engine->set_rank(1);
  Metrics metrics;
  ServerContext context;
  context.config.served_model_names = {"m"};
  context.engine = engine;
  context.tokenizer = std::make_shared<testing::FakeTokenizer>();
  context.metrics = &metrics;
  GenerationRequest request;
  request.sampling.max_tokens = 3;
  request.sampling.ignore_eos = true;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Generation::Callbacks callbacks;
  callbacks.on_delta = [](const ChoiceDelta&) {};
  callbacks.on_done = [&](const GenerationUsage&) {
    std::lock_guard lock(mu);
    done = true;
    cv.notify_all();
  };
  callbacks.on_error = [](const ApiError&) {};
  auto generation = std::make_shared<Generation>(
      context, "cmpl-times", std::vector<int32_t>{1, 2, 3, 4}, request, 0.0, callbacks);
  ASSERT_TRUE(generation->Start().ok());
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; }));
  }
  const std::string text =
      metrics.Render("m", 128, {protocol::EngineStats{}, protocol::EngineStats{}}, {true, true});
  const std::string l = "{model_name=\"m\",engine=\"1\"";
  for (const std::string& line : std::vector<std::string>{
           "vllm:request_success_total" + l + ",finished_reason=\"length\"} 1\n",
           "vllm:request_queue_time_seconds_sum" + l + "} 0.5\n",
           "vllm:request_prefill_time_seconds_sum" + l + "} 0.5\n",
           "vllm:request_decode_time_seconds_sum" + l + "} 2\n",
           "vllm:request_inference_time_seconds_sum" + l + "} 2.5\n",
           "vllm:request_time_per_output_token_seconds_sum" + l + "} 1\n",
           "vllm:request_prompt_tokens_sum" + l + "} 4\n",
           "vllm:request_generation_tokens_sum" + l + "} 3\n",
           "vllm:prompt_tokens_total" + l + "} 4\n", "vllm:generation_tokens_total" + l + "} 3\n",
           "vllm:time_to_first_token_seconds_count" + l + "} 1\n",
           "vllm:inter_token_latency_seconds_count" + l + "} 2\n",
           std::string("vllm:generation_tokens_total{model_name=\"m\",engine=\"0\"} 0\n")}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace tandem::server::openai
