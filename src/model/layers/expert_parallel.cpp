#include "model/layers/expert_parallel.h"

#include <algorithm>

#include "core/check.h"

namespace tandem::model {

ExpertRange LocalExpertsOf(int64_t num_experts, int32_t ep_rank, int32_t ep_size) {
  TANDEM_CHECK(ep_size >= 1 && ep_rank >= 0 && ep_rank < ep_size)
      << "EP rank " << ep_rank << " of size " << ep_size;
  const int64_t base = num_experts / ep_size, extra = num_experts % ep_size;
  ExpertRange r;
  r.count = base + (ep_rank < extra ? 1 : 0);
  r.first = ep_rank * base + std::min<int64_t>(ep_rank, extra);
  return r;
}

int32_t ExpertOwner(int64_t expert, int64_t num_experts, int32_t ep_size) {
  const int64_t base = num_experts / ep_size, extra = num_experts % ep_size;
  // The first `extra` ranks own base + 1 experts each.
  const int64_t big = extra * (base + 1);
  if (expert < big) return static_cast<int32_t>(expert / (base + 1));
  return static_cast<int32_t>(extra + (expert - big) / base);
}

RowRange DispatchRowsOf(int64_t rows, int32_t tp_rank, int32_t tp_size) {
  const int64_t part = (rows + tp_size - 1) / tp_size;
  RowRange r;
  r.first = std::min<int64_t>(rows, tp_rank * part);
  r.count = std::min<int64_t>(rows, r.first + part) - r.first;
  return r;
}

}  // namespace tandem::model
