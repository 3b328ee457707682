// StepProfile: phase sums per window of N steps, "other" as the rest of the step, nested scopes
// counted once (by the outer phase), nothing recorded while off.
#include <gtest/gtest.h>

#include <string>

#include "core/step_profile.h"

namespace tandem::core {
namespace {

TEST(StepProfileTest, SummaryGivesEachPhasePerStepAndTheRestAsOther) {
  StepProfile::Enable(10);
  StepProfile::Add(StepPhase::kMatmul, 0.012);
  StepProfile::Add(StepPhase::kAttention, 0.004);
  StepProfile::EndStep(0.010, 1, 1);
  StepProfile::EndStep(0.010, 3, 2);
  EXPECT_EQ(StepProfile::Summary(),
            "profile: 2 steps, 2.0 tokens and 1.5 sequences a step; 10.00 ms a step = matmul "
            "6.00 (60%) attention 2.00 (20%) norm/act 0.00 (0%) routing 0.00 (0%) collectives "
            "0.00 (0%) sampling 0.00 (0%) drafting 0.00 (0%) other 2.00 (20%)");
  StepProfile::Enable(0);
}

TEST(StepProfileTest, AWindowStartsAfreshOnceItsStepsAreLogged) {
  StepProfile::Enable(2);
  StepProfile::Add(StepPhase::kSampling, 0.001);
  StepProfile::EndStep(0.002, 1, 1);
  StepProfile::EndStep(0.002, 1, 1);  // the second step of the window: logged, then reset
  EXPECT_EQ(StepProfile::Summary(), "profile: no steps");
  StepProfile::Enable(0);
}

TEST(StepProfileTest, AScopeInsideAnotherPhaseCountsOnlyForTheOuterOne) {
  StepProfile::Enable(100);
  {
    const ScopedPhase outer(StepPhase::kDrafting);
    const ScopedPhase inner(StepPhase::kMatmul);  // the MTP head's matmuls are drafting
  }
  StepProfile::EndStep(1.0, 1, 1);
  const std::string s = StepProfile::Summary();
  EXPECT_NE(s.find(" matmul 0.00 (0%)"), std::string::npos) << s;
  StepProfile::Enable(0);
}

TEST(StepProfileTest, NothingIsRecordedWhileOff) {
  StepProfile::Enable(0);
  EXPECT_FALSE(StepProfile::enabled());
  { const ScopedPhase phase(StepPhase::kMatmul); }
  StepProfile::EndStep(1.0, 1, 1);
  EXPECT_EQ(StepProfile::Summary(), "profile: no steps");
  StepProfile::Enable(5);  // a scope opened while off and closed while on leaves no trace
  EXPECT_TRUE(StepProfile::enabled());
  StepProfile::Enable(0);
}

}  // namespace
}  // namespace tandem::core
