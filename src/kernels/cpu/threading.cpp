#include <omp.h>

#include "kernels/ops.h"

namespace tandem::kernels {

void SetNumThreads(int num_threads) {
  if (num_threads > 0) omp_set_num_threads(num_threads);
}

int NumThreads() { return omp_get_max_threads(); }

}  // namespace tandem::kernels
