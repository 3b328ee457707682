#include "cluster/manager/open_streams.h"

#include <gtest/gtest.h>

#include <memory>

namespace tandem::cluster::manager {
namespace {

TEST(OpenStreamsTest, EndAllEndsEachOpenStreamOnce) {
  OpenStreams streams;
  int ended_a = 0;
  int ended_b = 0;
  auto a = streams.Add([&] { ++ended_a; });
  auto b = streams.Add([&] { ++ended_b; });
  EXPECT_EQ(streams.size(), 2);
  streams.EndAll();
  streams.EndAll();  // idempotent: nothing is ended twice
  EXPECT_EQ(ended_a, 1);
  EXPECT_EQ(ended_b, 1);
  EXPECT_EQ(streams.size(), 0);
}

TEST(OpenStreamsTest, AStreamClosedBeforeTheShutdownIsNotEnded) {
  OpenStreams streams;
  int ended = 0;
  auto token = streams.Add([&] { ++ended; });
  token.reset();  // the client left
  EXPECT_EQ(streams.size(), 0);
  streams.EndAll();
  EXPECT_EQ(ended, 0);
}

TEST(OpenStreamsTest, AStreamAddedAfterTheShutdownIsEndedAtOnce) {
  OpenStreams streams;
  streams.EndAll();
  int ended = 0;
  auto token = streams.Add([&] { ++ended; });
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(streams.size(), 0);
}

TEST(OpenStreamsTest, ATokenMayOutliveTheRegistry) {
  std::shared_ptr<void> token;
  {
    OpenStreams streams;
    token = streams.Add([] {});
  }
  token.reset();  // a relay thread finishing after the manager is gone: no use after free
  SUCCEED();
}

}  // namespace
}  // namespace tandem::cluster::manager
