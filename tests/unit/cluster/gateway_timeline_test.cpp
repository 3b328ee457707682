#include "cluster/manager/gateway_timeline.h"

#include <gtest/gtest.h>

namespace tandem::cluster::manager {
namespace {

using nlohmann::json;

TEST(GatewayTimelineTest, StepsRatesNearestRankPercentilesAndBusiestDeployments) {
  GatewayTimeline timeline;
  timeline.Record(1000.0, "a", 10, 0.100);
  timeline.Record(1005.0, "a", 20, 0.300);
  timeline.Record(1009.9, "a", 0, -1);  // an error: counted, no TTFT sample
  timeline.Record(1012.0, "b", 5, 0.050);
  const json s = timeline.Snapshot(1015.0);
  EXPECT_EQ(s["step_s"], 10);
  ASSERT_EQ(s["points"].size(), 90u);
  const json& first = s["points"][88];  // the step [1000, 1010)
  EXPECT_EQ(first["time"], 1000);
  EXPECT_DOUBLE_EQ(first["requests_per_s"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(first["output_tokens_per_s"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(first["ttft_p50_ms"].get<double>(), 100.0);  // rank ceil(0.5·2) = 1
  EXPECT_DOUBLE_EQ(first["ttft_p95_ms"].get<double>(), 300.0);  // rank ceil(0.95·2) = 2
  const json& last = s["points"][89];
  EXPECT_EQ(last["time"], 1010);
  EXPECT_DOUBLE_EQ(last["ttft_p50_ms"].get<double>(), 50.0);
  EXPECT_TRUE(s["points"][0]["ttft_p50_ms"].is_null());
  EXPECT_EQ(s["points"][0]["time"], 1010 - 89 * 10);
  EXPECT_EQ(s["busiest"], json::parse(R"([{"model_name": "a", "requests": 3, "output_tokens": 30},
                                          {"model_name": "b", "requests": 1, "output_tokens": 5}])"));
}

TEST(GatewayTimelineTest, StepsOlderThanFifteenMinutesLeave) {
  GatewayTimeline timeline;
  timeline.Record(1000.0, "a", 10, 0.1);
  timeline.Record(1000.0 + 900, "b", 1, 0.2);  // 90 steps later: step 100 drops out
  const json s = timeline.Snapshot(1000.0 + 900);
  EXPECT_EQ(s["busiest"].size(), 1u);
  EXPECT_EQ(s["busiest"][0]["model_name"], "b");
  double requests = 0;
  for (const json& p : s["points"]) requests += p["requests_per_s"].get<double>();
  EXPECT_DOUBLE_EQ(requests, 0.1);
}

}  // namespace
}  // namespace tandem::cluster::manager
