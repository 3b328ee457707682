#include "apps/bench/memory_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace tandem::apps::bench {
namespace {

// Keeps the read loop's result alive so the compiler cannot drop the loads.
std::atomic<uint64_t> g_sink{0};

// Eight independent accumulators so the loop is limited by loads, not by an add chain.
uint64_t SumWords(const uint64_t* p, size_t n) {
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 += p[i];
    a1 += p[i + 1];
    a2 += p[i + 2];
    a3 += p[i + 3];
    a4 += p[i + 4];
    a5 += p[i + 5];
    a6 += p[i + 6];
    a7 += p[i + 7];
  }
  for (; i < n; ++i) a0 += p[i];
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

// Runs body(begin, end) on num_threads threads over [0, n) words; returns elapsed seconds.
double TimeParallel(size_t n, int num_threads, const std::function<void(size_t, size_t)>& body) {
  std::vector<std::thread> threads;
  const size_t per_thread = (n + num_threads - 1) / num_threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < num_threads; ++t) {
    size_t begin = std::min(n, per_thread * t);
    size_t end = std::min(n, begin + per_thread);
    threads.emplace_back(body, begin, end);
  }
  for (std::thread& th : threads) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

BandwidthResult MeasureMemoryBandwidth(size_t buffer_bytes, int num_threads, int repeats) {
  BandwidthResult result;
  result.num_threads = std::max(1, num_threads);
  result.repeats = std::max(1, repeats);
  const size_t n = buffer_bytes / sizeof(uint64_t);
  result.buffer_bytes = n * sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> src(new uint64_t[n]);
  std::unique_ptr<uint64_t[]> dst(new uint64_t[n]);
  uint64_t* s = src.get();
  uint64_t* d = dst.get();

  TimeParallel(n, result.num_threads, [s, d](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) s[i] = i;
    std::memset(d + begin, 0, (end - begin) * sizeof(uint64_t));
  });

  double best_read_s = 1e30;
  double best_copy_s = 1e30;
  for (int r = 0; r < result.repeats; ++r) {
    best_read_s =
        std::min(best_read_s, TimeParallel(n, result.num_threads, [s](size_t b, size_t e) {
                   g_sink.fetch_add(SumWords(s + b, e - b), std::memory_order_relaxed);
                 }));
    best_copy_s =
        std::min(best_copy_s, TimeParallel(n, result.num_threads, [s, d](size_t b, size_t e) {
                   std::memcpy(d + b, s + b, (e - b) * sizeof(uint64_t));
                 }));
  }
  result.read_gb_per_s = static_cast<double>(result.buffer_bytes) / best_read_s / 1e9;
  result.copy_gb_per_s = 2.0 * static_cast<double>(result.buffer_bytes) / best_copy_s / 1e9;
  return result;
}

}  // namespace tandem::apps::bench
