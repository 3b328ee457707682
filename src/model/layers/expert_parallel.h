// Expert parallel (vLLM --enable-expert-parallel): the experts of every MoE layer are split over
// the EP group — all DP × TP ranks, EP rank = dp_rank · tp_size + tp_rank (comm/parallel_state.h)
// — instead of each expert's matrices being split over the TP ranks. A MoE layer then sends each
// token to the ranks owning its top-k experts and takes the weighted expert outputs back
// (dispatch / combine, two all-to-alls; see Moe::Forward).
// Placement: vLLM's linear expert map (FusedMoE determine_expert_map): rank r owns a contiguous
// range; with E experts over N ranks the first E mod N ranks own one expert more.
#pragma once

#include <cstdint>

#include "comm/process_group.h"

namespace tandem::model {

struct EpContext {
  int32_t rank = 0;                     // EP rank, 0 … size-1
  int32_t size = 1;                     // dp_size × tp_size when enabled, else 1
  comm::ProcessGroup* group = nullptr;  // non-owning; the EP group (required when size > 1)
  // The TP group inside this rank's DP rank holds identical tokens: each TP rank dispatches
  // only its share of the rows (rows are split in tp_size contiguous parts) and the layer's
  // TP all-reduce puts the full output back together.
  int32_t tp_rank = 0;
  int32_t tp_size = 1;

  bool enabled() const { return size > 1; }
};

// The experts rank `ep_rank` owns: [first, first + count).
struct ExpertRange {
  int64_t first = 0;
  int64_t count = 0;
};
ExpertRange LocalExpertsOf(int64_t num_experts, int32_t ep_rank, int32_t ep_size);

// The EP rank that owns `expert` under LocalExpertsOf's placement.
int32_t ExpertOwner(int64_t expert, int64_t num_experts, int32_t ep_size);

// The rows [first, first + count) of a `rows`-row batch that TP rank `tp_rank` of `tp_size`
// dispatches (ceil-sized parts; the last ones may be short or empty).
struct RowRange {
  int64_t first = 0;
  int64_t count = 0;
};
RowRange DispatchRowsOf(int64_t rows, int32_t tp_rank, int32_t tp_size);

}  // namespace tandem::model
