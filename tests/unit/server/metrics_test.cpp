#include "server/metrics.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tandem::server
