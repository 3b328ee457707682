#include "server/preprocess_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace tandem::server {
namespace {

TEST(PreprocessPoolTest, RunsTasksOnItsOwnThreads) {
  PreprocessPool pool(2, 8);
  std::promise<std::thread::id> ran_on;
  ASSERT_TRUE(pool.Submit([&] { ran_on.set_value(std::this_thread::get_id()); }));
  EXPECT_NE(ran_on.get_future().get(), std::this_thread::get_id());
}

TEST(PreprocessPoolTest, RefusesATaskOnceMaxQueuedWait) {
  PreprocessPool pool(1, 2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(pool.Submit([&] {
    started.set_value();
    released.wait();
  }));
  started.get_future().wait();  // the only thread is busy: what follows queues
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.Submit([&] { ++ran; }));
  EXPECT_TRUE(pool.Submit([&] { ++ran; }));
  EXPECT_FALSE(pool.Submit([&] { ++ran; }));
  std::promise<void> last;
  release.set_value();
  // The queue drains in order; a task queued after the two marks the end.
  while (!pool.Submit([&] { last.set_value(); })) std::this_thread::yield();
  last.get_future().wait();
  EXPECT_EQ(ran.load(), 2);
}

TEST(PreprocessPoolTest, StopCancelsDropsQueuedTasksAndRefusesNewOnes) {
  PreprocessPool pool(1, 8);
  std::promise<void> started;
  std::atomic<bool> saw_cancel{false};
  ASSERT_TRUE(pool.Submit([&] {
    started.set_value();
    while (!pool.cancelled().load()) std::this_thread::yield();  // a long render, polling
    saw_cancel = true;
  }));
  started.get_future().wait();
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.Submit([&] { ++ran; }));
  pool.Stop();
  pool.Join();
  EXPECT_TRUE(saw_cancel.load());
  EXPECT_EQ(ran.load(), 0);
  EXPECT_FALSE(pool.Submit([&] { ++ran; }));
}

}  // namespace
}  // namespace tandem::server
