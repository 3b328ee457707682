#include "apps/bench/random_dataset.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace tandem::apps::bench {
namespace {

// First id that is an ordinary token in every vocabulary we serve (Llama-2 style vocabularies
// reserve 0..2 for <unk>, <s>, </s>).
constexpr int32_t kFirstOrdinaryTokenId = 3;

constexpr const char* kWords[] = {
    "time",  "river", "house", "green",  "music",  "light",  "stone",  "paper",  "quiet",  "water",
    "story", "cloud", "apple", "table",  "dream",  "north",  "small",  "bread",  "winter", "garden",
    "horse", "happy", "ocean", "forest", "window", "yellow", "friend", "summer", "little", "bird",
    "tree",  "road",  "cat",   "dog",    "sun",    "moon",   "star",   "fish",   "boat",   "sand"};

int SampleLength(std::mt19937_64& rng, int len, double range_ratio) {
  int low = std::max(1, static_cast<int>(std::floor(len * (1.0 - range_ratio))));
  int high = std::max(low, static_cast<int>(std::ceil(len * (1.0 + range_ratio))));
  if (range_ratio == 0.0) return len;
  return std::uniform_int_distribution<int>(low, high)(rng);
}

}  // namespace

std::vector<BenchRequest> SampleRandomRequests(const ServeBenchConfig& config) {
  std::mt19937_64 rng(config.seed);
  const int n = config.num_prompts;
  std::vector<BenchRequest> requests(n);

  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const int num_long = static_cast<int>(std::lround(n * config.long_request_fraction));
  for (int i = 0; i < num_long; ++i) requests[order[i]].is_long = true;

  std::uniform_int_distribution<int32_t> token_dist(kFirstOrdinaryTokenId,
                                                    config.random_vocab_size - 1);
  std::uniform_int_distribution<size_t> word_dist(0, std::size(kWords) - 1);
  for (int i = 0; i < n; ++i) {
    BenchRequest& r = requests[i];
    r.request_idx = i;
    r.input_len = SampleLength(rng, config.random_input_len, config.random_range_ratio);
    r.max_tokens = SampleLength(rng, config.random_output_len, config.random_range_ratio);
    if (r.is_long) {
      r.max_tokens = static_cast<int>(std::lround(r.max_tokens * config.long_request_multiplier));
    }
    if (config.IsChat()) {
      for (int t = 0; t < r.input_len; ++t) {
        if (t > 0) r.prompt_text += ' ';
        r.prompt_text += kWords[word_dist(rng)];
      }
    } else {
      r.prompt_token_ids.resize(r.input_len);
      for (int32_t& id : r.prompt_token_ids) id = token_dist(rng);
    }
  }
  return requests;
}

std::vector<double> SampleArrivalOffsets(int num_requests, double request_rate, double burstiness,
                                         uint64_t seed) {
  std::vector<double> offsets(num_requests, 0.0);
  if (std::isinf(request_rate)) return offsets;
  // Gamma(shape k, scale theta) has mean k*theta; mean gap must be 1/rate.
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::gamma_distribution<double> gap(burstiness, 1.0 / (request_rate * burstiness));
  double t = 0.0;
  for (int i = 0; i < num_requests; ++i) {
    offsets[i] = t;
    t += gap(rng);
  }
  return offsets;
}

}  // namespace tandem::apps::bench
