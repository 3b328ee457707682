// BindThreadsToCores (--additional-config enable_cpu_binding): pins the OpenMP threads to the
// asked CPUs of the allowed set and refuses a range beyond it. The process affinity is restored
// after each test.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <vector>

#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

class BindThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CPU_ZERO(&saved_);
    ASSERT_EQ(sched_getaffinity(0, sizeof(saved_), &saved_), 0);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &saved_)) allowed_.push_back(c);
    }
  }
  void TearDown() override {
#pragma omp parallel
    sched_setaffinity(0, sizeof(saved_), &saved_);
    sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  cpu_set_t saved_;
  std::vector<int> allowed_;
};

TEST_F(BindThreadsTest, PinsEachThreadToItsCpu) {
  ASSERT_FALSE(allowed_.empty());
  const int first = static_cast<int>(allowed_.size()) - 1;  // the last allowed CPU
  auto used = BindThreadsToCores(first, 1);
  ASSERT_TRUE(used.ok()) << used.status().ToString();
  ASSERT_EQ(used.value(), std::vector<int>{allowed_.back()});
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);  // the calling thread is thread 0
  EXPECT_EQ(CPU_COUNT(&now), 1);
  EXPECT_TRUE(CPU_ISSET(allowed_.back(), &now));
}

TEST_F(BindThreadsTest, RefusesCpusBeyondTheAllowedSet) {
  auto used = BindThreadsToCores(static_cast<int>(allowed_.size()), 1);
  ASSERT_EQ(used.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(used.status().message().find("enable_cpu_binding"), std::string::npos);
  EXPECT_EQ(BindThreadsToCores(0, 0).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tandem::kernels
