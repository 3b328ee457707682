#include "worker/ngram_proposer.h"

#include <gtest/gtest.h>

#include <vector>

namespace tandem::worker {
namespace {

using Ids = std::vector<int32_t>;

TEST(NgramProposerTest, CopiesWhatFollowedTheMostRecentEarlierOccurrenceOfTheLongestSuffix) {
  const NgramProposer proposer(1, 3, 3);
  // Suffix "1 2" last occurred at index 4, followed by 9 8 1.
  EXPECT_EQ(proposer.Propose(Ids{1, 2, 3, 4, 1, 2, 9, 8, 1, 2}), (Ids{9, 8, 1}));
  // The 3-gram "7 1 2" occurred earlier; it wins over the more recent "1 2".
  EXPECT_EQ(proposer.Propose(Ids{7, 1, 2, 5, 6, 1, 2, 0, 7, 1, 2}), (Ids{5, 6, 1}));
}

TEST(NgramProposerTest, StopsAtTheSequenceEndAndProposesNothingWithoutAMatch) {
  const NgramProposer proposer(1, 2, 5);
  EXPECT_EQ(proposer.Propose(Ids{4, 5, 4}), (Ids{5, 4}));  // only two tokens follow
  EXPECT_TRUE(proposer.Propose(Ids{1, 2, 3}).empty());
  EXPECT_TRUE(proposer.Propose(Ids{1}).empty());
  EXPECT_TRUE(proposer.Propose(Ids{}).empty());
  const NgramProposer at_least_two(2, 2, 5);
  EXPECT_TRUE(at_least_two.Propose(Ids{1, 2, 3, 9, 3}).empty());  // only a 1-gram repeats
}

}  // namespace
}  // namespace tandem::worker
