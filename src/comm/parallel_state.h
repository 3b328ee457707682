// How the world of DP × TP ranks is carved into groups, as vLLM lays it out: global rank
// = dp_rank · tp_size + tp_rank; a TP group is one DP rank's TP ranks; a DP group is the ranks
// with the same tp_rank; the EP group is the whole world (experts split over DP × TP).
#pragma once

#include <vector>

namespace tandem::comm {

struct ParallelLayout {
  int dp_size = 1;
  int tp_size = 1;

  int world_size() const { return dp_size * tp_size; }
  int GlobalRank(int dp_rank, int tp_rank) const { return dp_rank * tp_size + tp_rank; }
  // Global ranks of the TP group of `dp_rank`, in TP-rank order.
  std::vector<int> TpGroup(int dp_rank) const {
    std::vector<int> g;
    for (int t = 0; t < tp_size; ++t) g.push_back(GlobalRank(dp_rank, t));
    return g;
  }
  // Global ranks of the DP group of `tp_rank`, in DP-rank order.
  std::vector<int> DpGroup(int tp_rank) const {
    std::vector<int> g;
    for (int d = 0; d < dp_size; ++d) g.push_back(GlobalRank(d, tp_rank));
    return g;
  }
  // The EP group: every global rank.
  std::vector<int> EpGroup() const {
    std::vector<int> g;
    for (int r = 0; r < world_size(); ++r) g.push_back(r);
    return g;
  }
};

}  // namespace tandem::comm
