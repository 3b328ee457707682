// Random synthetic requests for `tandem bench serve --dataset-name random`.
//
// Completions prompts are token-id arrays (the OpenAI completions API accepts `prompt: [ids]`),
// so the input length is exact whatever the tokenizer; vLLM instead decodes random ids to text
// and re-tokenizes. Chat prompts are random words (about one token each).
// Reference: vLLM benchmarks/datasets.py RandomDataset (length sampling, range ratio).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/bench/serve_bench_config.h"

namespace tandem::apps::bench {

struct BenchRequest {
  int request_idx = 0;                    // position in the run, 0-based
  std::vector<int32_t> prompt_token_ids;  // completions: [input_len] token ids in [3, vocab)
  std::string prompt_text;                // chat: input_len random words separated by spaces
  int input_len = 0;                      // tokens (completions) or words (chat) sent
  int max_tokens = 0;                     // requested output length
  bool is_long = false;                   // chosen by --long-request-fraction
};

// Draws config.num_prompts requests, deterministic for a given config.seed.
// Input/output lengths are uniform integers in [len*(1-r), len*(1+r)] (at least 1);
// round(num_prompts * long_request_fraction) requests, picked at random, get their output length
// multiplied by long_request_multiplier.
std::vector<BenchRequest> SampleRandomRequests(const ServeBenchConfig& config);

// Arrival offsets in seconds from the start, one per request, non-decreasing: all 0 when
// request_rate is inf; else cumulative gamma(shape=burstiness, mean=1/request_rate) gaps
// (exponential = Poisson process when burstiness == 1). Reference: vLLM serve.get_request.
std::vector<double> SampleArrivalOffsets(int num_requests, double request_rate, double burstiness,
                                         uint64_t seed);

}  // namespace tandem::apps::bench
