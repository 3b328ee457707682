#include <omp.h>
#include <sched.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/ops.h"

namespace tandem::kernels {

void SetNumThreads(int num_threads) {
  if (num_threads > 0) omp_set_num_threads(num_threads);
}

int NumThreads() { return omp_get_max_threads(); }

Result<std::vector<int>> BindThreadsToCores(int first, int num_threads) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return Internal(std::string("sched_getaffinity: ") + std::strerror(errno));
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (num_threads < 1 || first < 0 || first + num_threads > static_cast<int>(cpus.size())) {
    return InvalidArgument("enable_cpu_binding: CPUs [" + std::to_string(first) + ", " +
                           std::to_string(first + num_threads) +
                           ") asked for, but this process "
                           "may run on " +
                           std::to_string(cpus.size()) +
                           " CPUs; lower --num-threads so every rank gets its own cores");
  }
  std::vector<int> used(num_threads, -1);
  std::vector<int> failed(num_threads, 0);
#pragma omp parallel num_threads(num_threads)
  {
    const int t = omp_get_thread_num();
    const int cpu = cpus[first + t];
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    failed[t] = sched_setaffinity(0, sizeof(one), &one) != 0 ? errno : 0;
    used[t] = cpu;
  }
  for (int t = 0; t < num_threads; ++t) {
    if (failed[t] != 0) {
      return Internal("enable_cpu_binding: pinning thread " + std::to_string(t) + " to CPU " +
                      std::to_string(used[t]) + ": " + std::strerror(failed[t]));
    }
  }
  return used;
}

}  // namespace tandem::kernels
