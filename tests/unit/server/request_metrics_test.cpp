#include "server/request_metrics.h"

#include <gtest/gtest.h>

namespace tandem::server {
namespace request_metrics_test {
namespace {

protocol::EngineOutput Output(std::vector<int32_t> tokens, double timestamp_s) {
  protocol::EngineOutput out;
  out.new_token_ids = std::move(tokens);
  out.timestamp_s = timestamp_s;
  return out;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

// vLLM v1/metrics/stats.py: queued = scheduled - queued; prefill = first token - scheduled;
// decode = last token - first token; inference = last token - scheduled; time per output
// token = decode / (tokens - 1). All on the engine's clock; e2e on the API server's.
TEST(RequestMetricsTest, IntervalsComeFromTheEnginesTimes) {
  Metrics metrics;
  RequestMetrics request(metrics, /*arrival_time_s=*/10.0, /*num_prompt_tokens=*/12);
  protocol::EngineOutput first = Output({5}, 1003.0);
  first.queued_time_s = 1000.0;
  first.scheduled_time_s = 1001.0;
  request.OnOutput(first, 1, 10.5);
  request.OnOutput(Output({6, 7}, 1004.0), 2, 10.75);  // two tokens in one output
  request.OnOutput(Output({8}, 1007.0), 1, 11.0);
  const FinishedRequestStats r = request.Finished("stop", 12.0);
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.num_prompt_tokens, 12);
  EXPECT_EQ(r.num_generation_tokens, 4);
  EXPECT_DOUBLE_EQ(r.e2e_latency_s, 2.0);
  EXPECT_DOUBLE_EQ(r.queued_time_s, 1.0);
  EXPECT_DOUBLE_EQ(r.prefill_time_s, 2.0);
  EXPECT_DOUBLE_EQ(r.decode_time_s, 4.0);
  EXPECT_DOUBLE_EQ(r.inference_time_s, 6.0);
  EXPECT_DOUBLE_EQ(r.mean_time_per_output_token_s, 4.0 / 3);
}

TEST(RequestMetricsTest, OneTokenHasNoTimePerOutputTokenAndUnknownTimesCountZero) {
  Metrics metrics;
  RequestMetrics request(metrics, 10.0, 3);
  request.OnOutput(Output({5}, 0.0), 1, 10.5);  // an engine that sends no times
  const FinishedRequestStats r = request.Finished("length", 11.0);
  EXPECT_EQ(r.mean_time_per_output_token_s, 0.0);
  EXPECT_EQ(r.queued_time_s, 0.0);
  EXPECT_EQ(r.prefill_time_s, 0.0);
  EXPECT_EQ(r.inference_time_s, 0.0);
}

TEST(RequestMetricsTest, CountsThePromptAtTheFirstTokenAndDeliveredTokensOnly) {
  Metrics metrics;
  RequestMetrics request(metrics, 10.0, 12);
  *request.mutable_dp_rank() = 1;
  const std::vector<protocol::EngineStats> ranks(2);
  const std::string l1 = "{model_name=\"m\",engine=\"1\"";
  request.OnOutput(Output({}, 1.0), 0, 10.1);  // no token yet: nothing counted
  std::string text = metrics.Render("m", 2048, ranks, {true, true});
  EXPECT_TRUE(Has(text, "vllm:prompt_tokens_total" + l1 + "} 0\n"));
  request.OnOutput(Output({5}, 2.0), 1, 10.25);
  text = metrics.Render("m", 2048, ranks, {true, true});
  EXPECT_TRUE(Has(text, "vllm:prompt_tokens_total" + l1 + "} 12\n"));
  EXPECT_TRUE(Has(text, "vllm:time_to_first_token_seconds_sum" + l1 + "} 0.25\n"));
  // Three tokens arrive together; a stop string matched in the second: two reach the client.
  request.OnOutput(Output({6, 7, 8}, 3.0), 2, 10.55);
  request.OnFinished("stop", 10.6);
  text = metrics.Render("m", 2048, ranks, {true, true});
  EXPECT_TRUE(Has(text, "vllm:prompt_tokens_total" + l1 + "} 12\n")) << "counted once";
  EXPECT_TRUE(Has(text, "vllm:generation_tokens_total" + l1 + "} 3\n"));
  EXPECT_TRUE(Has(text, "vllm:inter_token_latency_seconds_count" + l1 + "} 3\n"));
  EXPECT_TRUE(Has(text, "vllm:request_generation_tokens_sum" + l1 + "} 3\n"));
  EXPECT_TRUE(Has(text, "vllm:request_success_total" + l1 + ",finished_reason=\"stop\"} 1\n"));
  EXPECT_TRUE(Has(text,
                  "vllm:request_success_total{model_name=\"m\",engine=\"0\","
                  "finished_reason=\"stop\"} 0\n"));
}

TEST(RequestMetricsTest, AnAbortCountsOnlyInRequestSuccess) {
  Metrics metrics;
  RequestMetrics request(metrics, 10.0, 12);
  request.OnOutput(Output({5}, 2.0), 1, 10.25);
  request.OnEnded("abort");
  const std::string text = metrics.Render("m", 2048, protocol::EngineStats{});
  const std::string l = "{model_name=\"m\",engine=\"0\"";
  EXPECT_TRUE(Has(text, "vllm:request_success_total" + l + ",finished_reason=\"abort\"} 1\n"));
  EXPECT_TRUE(Has(text, "vllm:e2e_request_latency_seconds_count" + l + "} 0\n"));
  EXPECT_TRUE(Has(text, "vllm:request_queue_time_seconds_count" + l + "} 0\n"));
}

}  // namespace
}  // namespace request_metrics_test
}  // namespace tandem::server
