// SpeculativeConfig: how the engine drafts tokens ahead and verifies them in one forward pass
// (--speculative-config, vLLM's SpeculativeConfig fields), shared by the scheduler (how many
// drafts a step may carry) and the workers (who propose and verify them).
// Reference: vLLM vllm/config/speculative.py.
#pragma once

#include <cstdint>
#include <string>

namespace tandem::protocol {

struct SpeculativeConfig {
  // "" = off; "ngram" (prompt lookup: drafts copied from an earlier occurrence of the
  // sequence's last n tokens; any model); "mtp" / "qwen3_5_mtp" (the model's MTP head, applied
  // k times).
  std::string method;
  // Draft tokens verified per step per request at most (k); 0 = off.
  int32_t num_speculative_tokens = 0;
  // ngram: the suffix lengths n looked up, longest first, in [min, max].
  int32_t prompt_lookup_min = 0;
  int32_t prompt_lookup_max = 0;

  bool enabled() const { return num_speculative_tokens > 0; }
};

}  // namespace tandem::protocol
