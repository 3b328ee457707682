// RunCommBench: `tandem bench comm` — all-reduce (f32 sum) latency (µs) and bandwidth (GB/s) per
// backend and message size, with `ranks` forked processes on this machine (gloo over loopback).
// Bandwidths as nccl-tests reports them: algbw = bytes / time, busbw = algbw · 2(n−1)/n.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::apps::bench {

struct CommBenchConfig {
  std::vector<std::string> backends = {"shm", "gloo"};  // shm | gloo
  int ranks = 2;                                        // processes per group
  size_t min_bytes = 4;                                 // smallest message, bytes (multiple of 4)
  size_t max_bytes = size_t{16} << 20;  // largest message; sizes step ×4 from min_bytes
  double seconds_per_size = 0.3;        // measuring time budget per size (iterations adapt)
  double timeout_s = 60;                // group timeout

  // InvalidArgument naming the flag when a value is out of range.
  Status Validate() const;
};

// Runs the sweep, prints a table to stdout. Errors: a group that failed (its message).
Status RunCommBench(const CommBenchConfig& config);

}  // namespace tandem::apps::bench
