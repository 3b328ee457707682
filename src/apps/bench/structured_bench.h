// `tandem bench structured`: the cost of structured-output token masks, alone. Rows of
// matchers walk random valid paths through a JSON Schema's grammar (each step: the bitmask of
// the allowed tokens, applied to a logits row, then a uniformly drawn allowed token); the time
// per row and per step of `rows` rows is what a decode step of that batch pays for the masks.
// Compare it with the step time of the model at the same batch (`tandem bench serve`).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace tandem::apps {

struct StructuredBenchConfig {
  std::string model;        // a model folder or GGUF: its tokenizer is the vocabulary
  std::string tokenizer;    // --tokenizer; "" = the model's
  std::string schema_json;  // --schema: the JSON Schema text (or @FILE)
  int32_t rows = 16;        // --rows: sequences masked per step (the batch)
  int32_t steps = 300;      // --steps: measured steps after the warm-up
  int32_t warmup_steps = 100;
  uint64_t seed = 0;
};

Status RunStructuredBench(const StructuredBenchConfig& config);

}  // namespace tandem::apps
