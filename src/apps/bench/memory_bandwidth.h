// Measures this machine's main-memory bandwidth, the ceiling of decode speed (decode streams
// every weight once per step). Method follows STREAM: buffers far larger than any cache, all
// threads on disjoint slices, best of N repeats.
#pragma once

#include <cstddef>

namespace tandem::apps::bench {

struct BandwidthResult {
  size_t buffer_bytes = 0;  // size of each buffer
  int num_threads = 0;
  int repeats = 0;
  double read_gb_per_s = 0;  // bytes read / best time (sum of uint64 words), 1 GB = 1e9 bytes
  double copy_gb_per_s = 0;  // (bytes read + bytes written) / best time (memcpy), STREAM counting
};

// Allocates two buffers of `buffer_bytes` (touched first by the measuring threads, so pages land
// near them), then times a streaming read and a copy `repeats` times each with `num_threads`
// threads. Call from one thread; takes ~repeats × 3 × buffer_bytes / bandwidth seconds.
BandwidthResult MeasureMemoryBandwidth(size_t buffer_bytes, int num_threads, int repeats);

}  // namespace tandem::apps::bench
