// RankLoadTracker: held tokens from snapshots plus exactly the sends they do not count.
#include "router/rank_load_tracker.h"

#include <gtest/gtest.h>

namespace tandem::router {
namespace {

TEST(RankLoadTrackerTest, ASnapshotForgetsOnlyTheSendsTheRankHadReceived) {
  RankLoadTracker t;
  t.OnSend(100);
  t.OnSend(10);
  t.OnSend(1);
  EXPECT_EQ(t.unreported_tokens(), 111);
  // Taken when the rank had our first send only: it holds that one (100), the rest are ours.
  t.OnSnapshot(/*held_tokens=*/100, /*received_from_us=*/1);
  EXPECT_EQ(t.held_tokens(), 100);
  EXPECT_EQ(t.unreported_tokens(), 11);
  EXPECT_EQ(t.num_unreported(), 2);
  t.OnSnapshot(111, 3);
  EXPECT_EQ(t.held_tokens(), 111);
  EXPECT_EQ(t.unreported_tokens(), 0);
}

TEST(RankLoadTrackerTest, ASnapshotOlderThanEverySendKeepsThemAll) {
  RankLoadTracker t;
  t.OnSnapshot(50, 0);  // other API servers' requests
  t.OnSend(7);
  t.OnSnapshot(60, 0);  // the rank got more from others, none of ours yet
  EXPECT_EQ(t.held_tokens(), 60);
  EXPECT_EQ(t.unreported_tokens(), 7) << "vLLM's reset on every snapshot would drop it";
}

TEST(RankLoadTrackerTest, AnOlderPictureArrivingLateIsIgnored) {
  RankLoadTracker t;
  t.OnSend(5);
  t.OnSend(6);
  t.OnSnapshot(11, 2);
  t.OnSnapshot(5, 1);  // older: fewer of ours received
  EXPECT_EQ(t.held_tokens(), 11);
  EXPECT_EQ(t.unreported_tokens(), 0);
}

TEST(RankLoadTrackerTest, AFailedSendIsForgottenAndLaterSendsStillMatchTheRanksCount) {
  RankLoadTracker t;
  t.OnSend(5);
  t.OnSend(9);
  t.OnSendFailed();  // the 9 never left
  EXPECT_EQ(t.unreported_tokens(), 5);
  t.OnSend(3);  // the rank will count this one as our 2nd
  t.OnSnapshot(8, 2);
  EXPECT_EQ(t.unreported_tokens(), 0);
}

TEST(RankLoadTrackerTest, ClearDropsWhatALostRankHeld) {
  RankLoadTracker t;
  t.OnSend(5);
  t.OnSnapshot(40, 0);
  t.Clear();
  EXPECT_EQ(t.held_tokens(), 0);
  EXPECT_EQ(t.unreported_tokens(), 0);
}

}  // namespace
}  // namespace tandem::router
