// RunKernelsBench: `tandem bench kernels` — memory bandwidth and oneDNN f32 GEMM throughput of
// this machine, each reported with the ratio that makes it comparable across machines:
// GEMM GFLOP/s over a naive loop measured in the same run, and decode weight-streaming GB/s over
// the measured read bandwidth.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::apps::bench {

struct KernelsBenchConfig {
  size_t bandwidth_mib = 1024;             // size of each bandwidth buffer, MiB (>= 512)
  int num_threads = 0;                     // bandwidth threads; 0 = all hardware threads
  int repeats = 5;                         // best of this many timings
  std::vector<int> gemm_m = {1, 16, 512};  // rows: 1 and 16 = decode batches, 512 = prefill
  int gemm_k = 4096;
  int gemm_n = 4096;
  int naive_m = 32, naive_k = 512, naive_n = 512;  // small shape for the naive baseline
  std::string json_path;                           // save results here when non-empty

  // InvalidArgument naming the flag when a size is out of range.
  Status Validate() const;
};

// Runs the measurements, prints a table to stdout and writes the JSON when asked.
// Internal when oneDNN fails; InvalidArgument for a bad config or an unwritable --json path.
Status RunKernelsBench(const KernelsBenchConfig& config);

}  // namespace tandem::apps::bench
