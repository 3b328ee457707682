#include "server/metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "server/metrics_share.h"

namespace tandem::server {
namespace {

TEST(MetricsTest, RendersEverySeriesUnderBothPrefixesWithModelLabel) {
  Metrics metrics;
  metrics.AddPromptTokens(7);
  metrics.AddGenerationTokens(5);
  metrics.AddRequestSuccess("stop");
  metrics.ObserveTimeToFirstToken(0.003);
  metrics.ObserveInterTokenLatency(0.02);
  metrics.ObserveE2eRequestLatency(0.4);
  protocol::EngineStats stats;
  stats.num_running = 3;
  stats.kv_cache_usage = 0.5f;
  stats.num_gpu_blocks = 64;
  stats.block_size = 16;
  const std::string text = metrics.Render("m", stats);
  for (const std::string prefix : {"tandem:", "vllm:"}) {
    EXPECT_NE(text.find("# TYPE " + prefix + "num_requests_running gauge"), std::string::npos);
    EXPECT_NE(text.find(prefix + "num_requests_running{model_name=\"m\",engine=\"0\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find(prefix + "kv_cache_usage_perc{model_name=\"m\",engine=\"0\"} 0.5\n"), std::string::npos);
    EXPECT_NE(text.find(prefix + "prompt_tokens_total{model_name=\"m\"} 7\n"), std::string::npos);
    EXPECT_NE(text.find(prefix + "generation_tokens_total{model_name=\"m\"} 5\n"), std::string::npos);
    EXPECT_NE(text.find(prefix + "request_success_total{model_name=\"m\",finished_reason=\"stop\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("# HELP " + prefix + "time_to_first_token_seconds"), std::string::npos);
    EXPECT_NE(text.find(prefix + "time_to_first_token_seconds_bucket{model_name=\"m\",le=\"0.005\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find(prefix + "time_to_first_token_seconds_bucket{model_name=\"m\",le=\"0.001\"} 0\n"),
              std::string::npos);
    EXPECT_NE(text.find(prefix + "inter_token_latency_seconds_count{model_name=\"m\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find(prefix + "time_per_output_token_seconds_count{model_name=\"m\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find(prefix + "e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"+Inf\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find(prefix + "cache_config_info{model_name=\"m\",engine=\"0\",block_size=\"16\",num_gpu_blocks=\"64\"} 1\n"),
              std::string::npos);
  }
}

TEST(MetricsTest, StateSlotGaugesOnlyForModelsWithARecurrentState) {
  Metrics metrics;
  protocol::EngineStats stats;
  EXPECT_EQ(metrics.Render("m", stats).find("state_slots"), std::string::npos);
  stats.num_state_slots = 8;
  stats.num_state_slots_used = 3;
  const std::string text = metrics.Render("m", stats);
  EXPECT_NE(text.find("tandem:state_slots_used{model_name=\"m\",engine=\"0\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("tandem:state_slots_total{model_name=\"m\",engine=\"0\"} 8\n"),
            std::string::npos);
}

TEST(MetricsTest, ApiServersSharingATableEachRenderTheSumOfAll) {
  // Two API servers of one port: the head creates the table, the other opens it (here both in
  // one process, as two Metrics with their own handles).
  const std::string name = MetricsShareName(900000000L + static_cast<long>(::getpid()));
  auto created = MetricsShare::Create(name, 2);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto opened = MetricsShare::Open(name, 2);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(MetricsShare::Open(name, 3).status().code(), StatusCode::kInvalidArgument)
      << "a table sized for another K is refused";
  Metrics head, other;
  head.ShareVia(std::move(created).value(), 0);
  other.ShareVia(std::move(opened).value(), 1);
  head.AddRequestSuccess("stop");
  head.AddGenerationTokens(5);
  other.AddRequestSuccess("stop");
  other.AddRequestSuccess("length");
  other.AddGenerationTokens(7);
  other.ObserveE2eRequestLatency(0.4);
  head.ObserveE2eRequestLatency(3.0);
  for (const Metrics* m : {&head, &other}) {
    const std::string text = m->Render("m", protocol::EngineStats{});
    EXPECT_NE(text.find("vllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} 2\n"),
              std::string::npos) << text;
    EXPECT_NE(text.find("vllm:request_success_total{model_name=\"m\",finished_reason=\"length\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("vllm:generation_tokens_total{model_name=\"m\"} 12\n"), std::string::npos);
    EXPECT_NE(text.find("vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"0.5\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 2\n"),
              std::string::npos);
    EXPECT_NE(text.find("vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 3.4\n"),
              std::string::npos);
  }
  head.ShareVia(nullptr, 0);  // the creator's handle goes: the name is removed
  EXPECT_EQ(MetricsShare::Open(name, 2).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tandem::server
