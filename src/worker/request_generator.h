// RequestGenerator: the random stream of one request's sampling, portable across compilers and
// independent of the batch it runs in.
//
// Invariant: the sampler draws exactly one number from a request's generator per generated
// token (greedy tokens included), so the n-th token of a request always uses the n-th draw.
// That is what lets a seeded request give the same tokens alone or in any batch, and lets a
// request resumed after preemption continue its stream (Skip(num_output_tokens)).
//
// Deviation from vLLM: vLLM uses a torch.Generator per seeded request and a shared stream for
// unseeded ones, and restarts the seeded stream on preemption; we derive unseeded streams from
// (engine seed, per-request counter) so whole runs are reproducible, and resume seeded streams.
#pragma once

#include <cstdint>
#include <random>

namespace tandem::worker {

class RequestGenerator {
 public:
  // A stream that depends only on the request's own `seed` (SamplingParams::seed).
  static RequestGenerator FromSeed(uint64_t seed) { return RequestGenerator(seed); }

  // A stream for an unseeded request: the engine seed (`--seed`) mixed with a counter the worker
  // increments per added request, so two runs with the same arrivals draw the same numbers.
  static RequestGenerator FromEngineSeed(uint64_t engine_seed, uint64_t request_counter) {
    return RequestGenerator(SplitMix64(engine_seed ^ SplitMix64(request_counter + 1)));
  }

  // Uniform double in [0, 1) from the top 53 bits of one 64-bit draw (portable, unlike
  // std::uniform_real_distribution whose algorithm is implementation-defined).
  double NextUniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Discards `num_draws` numbers (a resumed request skips the draws of its earlier tokens).
  void Skip(uint64_t num_draws) { engine_.discard(num_draws); }

 private:
  explicit RequestGenerator(uint64_t seed) : engine_(seed) {}

  // Reference: Steele, Lea, Flood, "Fast splittable pseudorandom number generators" (2014).
  static uint64_t SplitMix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

  std::mt19937_64 engine_;
};

}  // namespace tandem::worker
