#include "server/metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "server/metrics_share.h"

namespace tandem::server {
namespace metrics_test {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(MetricsTest, RendersEverySeriesUnderBothPrefixesWithModelAndEngineLabels) {
  Metrics metrics;
  metrics.AddPromptTokens(0, 7);
  metrics.AddGenerationTokens(0, 5);
  metrics.ObserveTimeToFirstToken(0, 0.003);
  metrics.ObserveInterTokenLatency(0, 0.02);
  FinishedRequestStats finished;
  finished.finish_reason = "stop";
  finished.e2e_latency_s = 0.4;
  metrics.ObserveFinishedRequest(0, finished);
  protocol::EngineStats stats;
  stats.num_running = 3;
  stats.kv_cache_usage = 0.5f;
  stats.num_gpu_blocks = 64;
  stats.block_size = 16;
  stats.prefix_cache_queries = 40;
  stats.prefix_cache_hits = 16;
  const std::string text = metrics.Render("m", 2048, stats);
  const std::string l = "{model_name=\"m\",engine=\"0\"";
  for (const std::string prefix : {"tandem:", "vllm:"}) {
    EXPECT_TRUE(Has(text, "# TYPE " + prefix + "num_requests_running gauge"));
    EXPECT_TRUE(Has(text, prefix + "num_requests_running" + l + "} 3\n"));
    EXPECT_TRUE(Has(text, prefix + "kv_cache_usage_perc" + l + "} 0.5\n"));
    EXPECT_TRUE(Has(text, "# TYPE " + prefix + "prefix_cache_queries_total counter"));
    EXPECT_TRUE(Has(text, prefix + "prefix_cache_queries_total" + l + "} 40\n"));
    EXPECT_TRUE(Has(text, prefix + "prefix_cache_hits_total" + l + "} 16\n"));
    EXPECT_TRUE(Has(text, prefix + "prompt_tokens_total" + l + "} 7\n"));
    EXPECT_TRUE(Has(text, prefix + "generation_tokens_total" + l + "} 5\n"));
    EXPECT_TRUE(Has(text, prefix + "request_success_total" + l + ",finished_reason=\"stop\"} 1\n"));
    EXPECT_TRUE(Has(text, "# HELP " + prefix + "time_to_first_token_seconds"));
    EXPECT_TRUE(
        Has(text, prefix + "time_to_first_token_seconds_bucket" + l + ",le=\"0.005\"} 1\n"));
    EXPECT_TRUE(
        Has(text, prefix + "time_to_first_token_seconds_bucket" + l + ",le=\"0.001\"} 0\n"));
    EXPECT_TRUE(Has(text, prefix + "inter_token_latency_seconds_count" + l + "} 1\n"));
    EXPECT_TRUE(Has(text, prefix + "time_per_output_token_seconds_count" + l + "} 1\n"));
    EXPECT_TRUE(Has(text, prefix + "e2e_request_latency_seconds_bucket" + l + ",le=\"+Inf\"} 1\n"));
    EXPECT_TRUE(Has(
        text, prefix + "cache_config_info" + l + ",block_size=\"16\",num_gpu_blocks=\"64\"} 1\n"));
    for (const char* hist : {"request_queue_time_seconds", "request_prefill_time_seconds",
                             "request_decode_time_seconds", "request_inference_time_seconds",
                             "request_prompt_tokens", "request_generation_tokens",
                             "request_time_per_output_token_seconds", "iteration_tokens_total"}) {
      EXPECT_TRUE(Has(text, "# TYPE " + prefix + hist + " histogram")) << hist;
      EXPECT_TRUE(Has(text, prefix + hist + "_bucket" + l + ",le=\"+Inf\"} ")) << hist;
      EXPECT_TRUE(Has(text, prefix + hist + "_count" + l + "} ")) << hist;
      EXPECT_TRUE(Has(text, prefix + hist + "_sum" + l + "} ")) << hist;
    }
  }
}

TEST(MetricsTest, AFinishedRequestFillsEveryPerRequestHistogram) {
  Metrics metrics;
  FinishedRequestStats r;
  r.finish_reason = "length";
  r.num_prompt_tokens = 12;
  r.num_generation_tokens = 3;
  r.e2e_latency_s = 2.25;
  r.queued_time_s = 0.25;
  r.prefill_time_s = 0.5;
  r.decode_time_s = 1.5;
  r.inference_time_s = 2.0;
  r.mean_time_per_output_token_s = 0.75;
  metrics.ObserveFinishedRequest(0, r);
  const std::string text = metrics.Render("m", 2048, protocol::EngineStats{});
  const std::string l = "{model_name=\"m\",engine=\"0\"";
  EXPECT_TRUE(Has(text, "vllm:request_success_total" + l + ",finished_reason=\"length\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:e2e_request_latency_seconds_sum" + l + "} 2.25\n"));
  EXPECT_TRUE(Has(text, "vllm:request_queue_time_seconds_bucket" + l + ",le=\"0.3\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:request_queue_time_seconds_sum" + l + "} 0.25\n"));
  EXPECT_TRUE(Has(text, "vllm:request_prefill_time_seconds_bucket" + l + ",le=\"0.3\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_prefill_time_seconds_bucket" + l + ",le=\"0.5\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:request_decode_time_seconds_bucket" + l + ",le=\"1.0\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_decode_time_seconds_bucket" + l + ",le=\"1.5\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:request_inference_time_seconds_sum" + l + "} 2\n"));
  EXPECT_TRUE(
      Has(text, "vllm:request_time_per_output_token_seconds_bucket" + l + ",le=\"0.5\"} 0\n"));
  EXPECT_TRUE(
      Has(text, "vllm:request_time_per_output_token_seconds_bucket" + l + ",le=\"0.75\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:request_prompt_tokens_bucket" + l + ",le=\"10.0\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_prompt_tokens_bucket" + l + ",le=\"20.0\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:request_prompt_tokens_sum" + l + "} 12\n"));
  EXPECT_TRUE(Has(text, "vllm:request_generation_tokens_bucket" + l + ",le=\"2.0\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_generation_tokens_bucket" + l + ",le=\"5.0\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:request_generation_tokens_count" + l + "} 1\n"));
}

// vLLM: build_1_2_5_buckets(max_model_len), bounds written as Prometheus' Python client does.
TEST(MetricsTest, TokenCountBucketsRunOneTwoFiveUpToMaxModelLen) {
  Metrics metrics;
  const std::string l = "{model_name=\"m\",engine=\"0\"";
  std::string text = metrics.Render("m", 2048, protocol::EngineStats{});
  EXPECT_TRUE(Has(text, "vllm:request_prompt_tokens_bucket" + l + ",le=\"1.0\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_prompt_tokens_bucket" + l + ",le=\"2000.0\"} 0\n"));
  EXPECT_FALSE(Has(text, "vllm:request_prompt_tokens_bucket" + l + ",le=\"5000.0\"}"));
  text = metrics.Render("m", 2000000, protocol::EngineStats{});
  EXPECT_TRUE(Has(text, "vllm:request_generation_tokens_bucket" + l + ",le=\"500000.0\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_generation_tokens_bucket" + l + ",le=\"1e+06\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_generation_tokens_bucket" + l + ",le=\"2e+06\"} 0\n"));
  EXPECT_FALSE(Has(text, "le=\"5e+06\""));
}

TEST(MetricsTest, IterationTokensAreTheEnginesCumulativeHistogram) {
  Metrics metrics;
  protocol::EngineStats stats;
  stats.iteration_tokens_buckets.assign(protocol::kNumIterationTokensBuckets + 1, 0);
  stats.iteration_tokens_buckets[0] = 2;  // two steps of 1 token
  stats.iteration_tokens_buckets[4] = 1;  // one of 41
  stats.iteration_tokens_sum = 43;
  const std::string text = metrics.Render("m", 2048, stats);
  const std::string l = "{model_name=\"m\",engine=\"0\"";
  EXPECT_TRUE(Has(text, "vllm:iteration_tokens_total_bucket" + l + ",le=\"1.0\"} 2\n"));
  EXPECT_TRUE(Has(text, "vllm:iteration_tokens_total_bucket" + l + ",le=\"32.0\"} 2\n"));
  EXPECT_TRUE(Has(text, "vllm:iteration_tokens_total_bucket" + l + ",le=\"64.0\"} 3\n"));
  EXPECT_TRUE(Has(text, "vllm:iteration_tokens_total_bucket" + l + ",le=\"16384.0\"} 3\n"));
  EXPECT_TRUE(Has(text, "vllm:iteration_tokens_total_count" + l + "} 3\n"));
  EXPECT_TRUE(Has(text, "vllm:iteration_tokens_total_sum" + l + "} 43\n"));
}

TEST(MetricsTest, EachDpRankHasItsOwnSeries) {
  Metrics metrics;
  metrics.AddGenerationTokens(1, 5);
  metrics.AddRequestSuccess(1, "abort");
  const std::string text =
      metrics.Render("m", 2048, {protocol::EngineStats{}, protocol::EngineStats{}}, {true, true});
  EXPECT_TRUE(Has(text, "vllm:generation_tokens_total{model_name=\"m\",engine=\"0\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:generation_tokens_total{model_name=\"m\",engine=\"1\"} 5\n"));
  EXPECT_TRUE(Has(text,
                  "vllm:request_success_total{model_name=\"m\",engine=\"1\","
                  "finished_reason=\"abort\"} 1\n"));
  EXPECT_TRUE(
      Has(text, "vllm:request_queue_time_seconds_count{model_name=\"m\",engine=\"1\"} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:iteration_tokens_total_count{model_name=\"m\",engine=\"1\"} 0\n"));
}

TEST(MetricsTest, ModelNameLabelIsEscaped) {
  Metrics metrics;
  const std::string text = metrics.Render("a\"b\\c", 2048, protocol::EngineStats{});
  EXPECT_TRUE(Has(text, "vllm:num_requests_running{model_name=\"a\\\"b\\\\c\",engine=\"0\"} 0\n"));
}

TEST(MetricsTest, StateSlotGaugesOnlyForModelsWithARecurrentState) {
  Metrics metrics;
  protocol::EngineStats stats;
  EXPECT_EQ(metrics.Render("m", 2048, stats).find("state_slots"), std::string::npos);
  stats.num_state_slots = 8;
  stats.num_state_slots_used = 3;
  const std::string text = metrics.Render("m", 2048, stats);
  EXPECT_NE(text.find("tandem:state_slots_used{model_name=\"m\",engine=\"0\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("tandem:state_slots_total{model_name=\"m\",engine=\"0\"} 8\n"),
            std::string::npos);
}

TEST(MetricsTest, ApiServersSharingATableEachRenderTheSumOfAll) {
  // Two API servers of one port: the head creates the table, the other opens it (here both in
  // one process, as two Metrics with their own handles). Two DP ranks.
  const std::string name = MetricsShareName(900000000L + static_cast<long>(::getpid()));
  auto created = MetricsShare::Create(name, 2, 2);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto opened = MetricsShare::Open(name, 2, 2);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(MetricsShare::Open(name, 3, 2).status().code(), StatusCode::kInvalidArgument)
      << "a table sized for another K is refused";
  EXPECT_EQ(MetricsShare::Open(name, 2, 3).status().code(), StatusCode::kInvalidArgument)
      << "a table sized for another DP size is refused";
  Metrics head, other;
  head.ShareVia(std::move(created).value(), 0);
  other.ShareVia(std::move(opened).value(), 1);
  FinishedRequestStats stop, length;
  stop.finish_reason = "stop";
  stop.e2e_latency_s = 3.0;
  length.finish_reason = "length";
  length.e2e_latency_s = 0.4;
  head.ObserveFinishedRequest(0, stop);
  head.AddGenerationTokens(0, 5);
  other.ObserveFinishedRequest(0, length);
  other.AddGenerationTokens(0, 7);
  other.AddGenerationTokens(1, 2);
  other.AddRequestSuccess(1, "abort");
  const std::vector<protocol::EngineStats> ranks(2);
  for (const Metrics* m : {&head, &other}) {
    const std::string text = m->Render("m", 2048, ranks, {true, true});
    const std::string l0 = "{model_name=\"m\",engine=\"0\"";
    const std::string l1 = "{model_name=\"m\",engine=\"1\"";
    EXPECT_TRUE(Has(text, "vllm:request_success_total" + l0 + ",finished_reason=\"stop\"} 1\n"))
        << text;
    EXPECT_TRUE(Has(text, "vllm:request_success_total" + l0 + ",finished_reason=\"length\"} 1\n"));
    EXPECT_TRUE(Has(text, "vllm:request_success_total" + l1 + ",finished_reason=\"abort\"} 1\n"));
    EXPECT_TRUE(Has(text, "vllm:generation_tokens_total" + l0 + "} 12\n"));
    EXPECT_TRUE(Has(text, "vllm:generation_tokens_total" + l1 + "} 2\n"));
    EXPECT_TRUE(Has(text, "vllm:e2e_request_latency_seconds_bucket" + l0 + ",le=\"0.5\"} 1\n"));
    EXPECT_TRUE(Has(text, "vllm:e2e_request_latency_seconds_count" + l0 + "} 2\n"));
    EXPECT_TRUE(Has(text, "vllm:e2e_request_latency_seconds_sum" + l0 + "} 3.4\n"));
  }
  head.ShareVia(nullptr, 0);  // the creator's handle goes: the name is removed
  EXPECT_EQ(MetricsShare::Open(name, 2, 2).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace metrics_test
}  // namespace tandem::server
