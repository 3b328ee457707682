// --speculative-config JSON → protocol::SpeculativeConfig, with vLLM's fields and defaults.
#pragma once

#include <string>

#include "core/status.h"
#include "protocol/speculative_config.h"

namespace tandem::apps {

// Parses `json` ("" = speculation off). Fields: method ("ngram"; "mtp" / "qwen3_5_mtp": the
// model's MTP layers, checked when it loads), num_speculative_tokens
// (>= 1, required), prompt_lookup_min / prompt_lookup_max (ngram; >= 1, min <= max; one given
// sets the other, neither gives 5 and 5 as vLLM), enforce_eager (accepted; no effect on CPU).
// Errors: kInvalidArgument naming the field, the value and what was expected — an unknown
// field or method included, ngram fields with an MTP method.
Result<protocol::SpeculativeConfig> ParseSpeculativeConfig(const std::string& json);

// "ngram k=3 n=1..4", for logs and the settings DP ranks compare; "off" when disabled.
std::string DescribeSpeculativeConfig(const protocol::SpeculativeConfig& config);

}  // namespace tandem::apps
