#include "engine/scheduler_config.h"

#include <string>

namespace tandem::engine {

namespace {

Status MustBePositive(const char* name, int64_t value) {
  if (value > 0) return Status::Ok();
  return InvalidArgument(std::string("scheduler config: ") + name + " is " + std::to_string(value) +
                         "; expected a positive number");
}

}  // namespace

Result<SchedulingPolicy> ParseSchedulingPolicy(std::string_view name) {
  if (name == "fcfs") return SchedulingPolicy::kFcfs;
  if (name == "priority") return SchedulingPolicy::kPriority;
  return InvalidArgument("scheduling policy '" + std::string(name) +
                         "' is not one of: fcfs, priority");
}

const char* SchedulingPolicyName(SchedulingPolicy policy) {
  return policy == SchedulingPolicy::kPriority ? "priority" : "fcfs";
}

Status SchedulerConfig::Validate() const {
  TANDEM_RETURN_IF_ERROR(MustBePositive("max_num_seqs", max_num_seqs));
  TANDEM_RETURN_IF_ERROR(MustBePositive("max_num_batched_tokens", max_num_batched_tokens));
  TANDEM_RETURN_IF_ERROR(MustBePositive("max_model_len", max_model_len));
  TANDEM_RETURN_IF_ERROR(MustBePositive("block_size", block_size));
  TANDEM_RETURN_IF_ERROR(MustBePositive("num_gpu_blocks", num_gpu_blocks));
  if (long_prefill_token_threshold < 0) {
    return InvalidArgument("scheduler config: long_prefill_token_threshold is " +
                           std::to_string(long_prefill_token_threshold) +
                           "; expected 0 (off) or a positive number of tokens");
  }
  const int64_t kv_capacity_tokens = int64_t{num_gpu_blocks} * block_size;
  if (kv_capacity_tokens < max_model_len) {
    return InvalidArgument("scheduler config: max_model_len " + std::to_string(max_model_len) +
                           " does not fit in the KV cache: " + std::to_string(num_gpu_blocks) +
                           " blocks x " + std::to_string(block_size) +
                           " tokens = " + std::to_string(kv_capacity_tokens) +
                           " tokens; lower --max-model-len or give the KV cache more memory");
  }
  return Status::Ok();
}

}  // namespace tandem::engine
