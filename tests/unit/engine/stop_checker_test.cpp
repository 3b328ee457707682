#include "engine/stop_checker.h"

#include <gtest/gtest.h>

#include "testing.h"

namespace tandem::engine {
namespace {

using protocol::FinishReason;
using testing::MakeRequest;

constexpr int32_t kEos = 2;

Request MakeStopRequest(int32_t max_tokens = 8) {
  protocol::EngineRequest request = MakeRequest("r", {10, 11, 12}, max_tokens);
  request.eos_token_ids = {kEos};
  return Request(std::move(request));
}

TEST(StopCheckerTest, EosStops) {
  Request request = MakeStopRequest();
  request.AppendOutputToken(5);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kNone);
  request.AppendOutputToken(kEos);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kStop);
  EXPECT_EQ(request.status, RequestStatus::kFinishedStopped);
  EXPECT_EQ(request.stop_token_id, -1);  // EOS is not a stop_token_ids hit
}

TEST(StopCheckerTest, IgnoreEosKeepsGoing) {
  protocol::EngineRequest raw = MakeRequest("r", {10}, 8);
  raw.eos_token_ids = {kEos};
  raw.sampling.ignore_eos = true;
  Request request(std::move(raw));
  request.AppendOutputToken(kEos);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kNone);
}

TEST(StopCheckerTest, EosBeforeMinTokensIsIgnored) {
  protocol::EngineRequest raw = MakeRequest("r", {10}, 8);
  raw.eos_token_ids = {kEos};
  raw.sampling.min_tokens = 2;
  Request request(std::move(raw));
  request.AppendOutputToken(kEos);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kNone);
  request.AppendOutputToken(kEos);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kStop);
}

TEST(StopCheckerTest, StopTokenIdStopsAndIsReported) {
  protocol::EngineRequest raw = MakeRequest("r", {10}, 8);
  raw.sampling.stop_token_ids = {42, 43};
  Request request(std::move(raw));
  request.AppendOutputToken(43);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kStop);
  EXPECT_EQ(request.stop_token_id, 43);
}

TEST(StopCheckerTest, MaxTokensGivesLength) {
  Request request = MakeStopRequest(/*max_tokens=*/2);
  request.AppendOutputToken(5);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kNone);
  request.AppendOutputToken(6);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kLength);
  EXPECT_EQ(request.status, RequestStatus::kFinishedLength);
}

TEST(StopCheckerTest, EosAsLastAllowedTokenIsAStop) {
  Request request = MakeStopRequest(/*max_tokens=*/1);
  request.AppendOutputToken(kEos);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kStop);
}

TEST(StopCheckerTest, MaxModelLenGivesLength) {
  Request request = MakeStopRequest(/*max_tokens=*/100);
  request.AppendOutputToken(5);  // 4 tokens
  EXPECT_EQ(CheckStop(request, 5), FinishReason::kNone);
  request.AppendOutputToken(6);  // 5 tokens = max_model_len
  EXPECT_EQ(CheckStop(request, 5), FinishReason::kLength);
}

TEST(StopCheckerTest, LengthAppliesEvenBeforeMinTokens) {
  protocol::EngineRequest raw = MakeRequest("r", {10}, 1);
  raw.sampling.min_tokens = 1;
  Request request(std::move(raw));
  request.AppendOutputToken(5);
  EXPECT_EQ(CheckStop(request, 64), FinishReason::kLength);
}

}  // namespace
}  // namespace tandem::engine
