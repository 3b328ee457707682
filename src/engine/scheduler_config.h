// SchedulerConfig: the knobs of one engine core's Scheduler and KvCacheManager.
// Reference: vLLM SchedulerConfig + CacheConfig (same names; flags map 1:1 in apps/).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace tandem::engine {

// vLLM's --scheduling-policy: which waiting request is admitted next and which running one is
// preempted first (engine/request_queue.h; docs/design/priority-scheduling.md).
enum class SchedulingPolicy { kFcfs, kPriority };

// "fcfs" | "priority". Errors: kInvalidArgument naming the value and the choices.
Result<SchedulingPolicy> ParseSchedulingPolicy(std::string_view name);
const char* SchedulingPolicyName(SchedulingPolicy policy);

struct SchedulerConfig {
  // Running requests at most (--max-num-seqs).
  int32_t max_num_seqs = 256;
  // Tokens computed per step at most, summed over requests (--max-num-batched-tokens). Long
  // prompts are chunked to fit; vLLM's default with chunked prefill is 2048.
  int32_t max_num_batched_tokens = 2048;
  // Prompt + generated tokens per request at most (--max-model-len). Must be set (> 0).
  int32_t max_model_len = 0;
  // Tokens per KV block (--block-size).
  int32_t block_size = 16;
  // KV blocks in the pool; computed by the worker from the memory budget. Must be set (> 0).
  int32_t num_gpu_blocks = 0;
  // Recurrent-state slots (hybrid models: --max-num-seqs of them); 0 = the model keeps no
  // state. The KvCacheManager gives each running request one (NewRequestData::state_slot); a
  // request is admitted only with a free slot.
  int32_t num_state_slots = 0;
  // Reuse KV blocks of identical prompt prefixes (--enable-prefix-caching).
  bool enable_prefix_caching = true;
  // > 0: a prefill chunk of one request holds at most this many tokens per step, so one long
  // prompt cannot take the whole budget (--long-prefill-token-threshold). 0 = off.
  int32_t long_prefill_token_threshold = 0;
  // Speculative decoding (--speculative-config num_speculative_tokens): draft tokens a running
  // request may verify per step, beyond its own. 0 = off.
  int32_t num_speculative_tokens = 0;
  // KV slots allocated beyond each request's scheduled tokens (a drafter that writes its own
  // KV ahead: MTP writes up to k − 1 positions past the last token). 0 = none.
  int32_t num_lookahead_tokens = 0;
  // --scheduling-policy: fcfs, or priority (by each request's priority, then arrival).
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;

  // Checks every field and that one max_model_len request fits in the KV pool (otherwise it
  // could never be scheduled). Errors: kInvalidArgument naming the field, the value found and
  // what was expected.
  Status Validate() const;
};

}  // namespace tandem::engine
