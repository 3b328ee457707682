// EngineCoreConfig: everything an engine-core process needs, resolved by `tandem serve` and
// handed to the child as one JSON argument (`tandem _engine-core --config-json '{...}'`).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "protocol/speculative_config.h"

namespace tandem::apps {

struct EngineCoreConfig {
  std::string model_path;
  std::string tokenizer_path;  // --tokenizer ("" = the model's); structured outputs read it
  std::string dtype = "auto";
  std::string kv_cache_dtype = "auto";
  std::string device = "auto";      // --device auto | cpu | cuda
  std::string quantization;         // --quantization ("" = detect)
  int num_threads = 0;              // 0 = all cores
  bool enable_cpu_binding = false;  // --additional-config enable_cpu_binding
  std::string q8_0_dot = "int8";    // --additional-config q8_0_dot (int8 | float32)
  int profile_steps = 0;            // --additional-config profile_steps (0 = off)
  int dp_local_rank = 0;            // this DP rank's index among the ranks of its machine
  int dp_rank = 0;
  // scheduler
  int max_model_len = 0;  // resolved (never 0 here)
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
  std::string scheduling_policy = "fcfs";  // --scheduling-policy: fcfs | priority
  int block_size = 16;
  bool enable_prefix_caching = true;
  bool enable_prefix_caching_given = false;  // asked for on the command line (not the default)
  // memory
  double gpu_memory_utilization = 0.9;
  int64_t kv_cache_memory_bytes = 0;  // 0 = from utilization
  int64_t seed = 0;
  int32_t eos_token_id = -1;  // masked in sampling below a request's min_tokens
  // control-plane endpoints, one rank without a coordinator
  std::string input_endpoint;   // engine binds; API server PUSHes requests
  std::string output_endpoint;  // API server binds; engine PUSHes outputs
  // data parallel: the engine dials the head's handshake ROUTER instead, and learns where
  // outputs and stats go from its reply
  std::string handshake_endpoint;  // "tcp://A:P"; empty = the one-rank layout above
  // An API machine's engine (hybrid / external DP load balancing): its own machine's API
  // servers' output PULLs, by client index, instead of the head's. Empty = the head's.
  std::vector<std::string> output_endpoints;
  int dp_size = 1;
  int tensor_parallel_size = 1;
  bool enable_expert_parallel = false;
  double ready_timeout_s = 600;  // start-up deadline, from the engine's own start
  // tensor parallel: TP ranks 1..T-1 are `_tp-worker` children of the engine core (rank 0)
  int tp_rank = 0;
  std::string tp_group_name;     // the shared-memory collectives group of this DP rank
  std::string tp_plan_endpoint;  // worker: where its plans come from
  std::string tp_ack_endpoint;   // worker: where its acks go
  // expert parallel over DP ranks (from the head's handshake reply; see HandshakeReply):
  // collectives backend and name of the groups spanning DP ranks, and their gloo rendezvous
  std::string group_backend;  // "shm" | "gloo"
  std::string group_name;
  std::string ep_rendezvous;  // "host:port" of the EP group's store (global rank 0)
  std::string dp_rendezvous;  // "host:port" of the engine cores' DP group's store
  // speculative decoding (--speculative-config; protocol::SpeculativeConfig's fields)
  std::string spec_method;  // "" = off
  int num_speculative_tokens = 0;
  int prompt_lookup_min = 0;
  int prompt_lookup_max = 0;
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    EngineCoreConfig, model_path, tokenizer_path, dtype, kv_cache_dtype, device, quantization,
    num_threads, enable_cpu_binding, q8_0_dot, profile_steps, dp_local_rank, dp_rank, max_model_len,
    max_num_seqs, max_num_batched_tokens, scheduling_policy, block_size, enable_prefix_caching,
    enable_prefix_caching_given, gpu_memory_utilization, kv_cache_memory_bytes, seed, eos_token_id,
    input_endpoint, output_endpoint, handshake_endpoint, output_endpoints, dp_size,
    tensor_parallel_size, enable_expert_parallel, ready_timeout_s, tp_rank, tp_group_name,
    tp_plan_endpoint, tp_ack_endpoint, group_backend, group_name, ep_rendezvous, dp_rendezvous,
    spec_method, num_speculative_tokens, prompt_lookup_min, prompt_lookup_max)

// The speculative decoding part of `config`.
inline protocol::SpeculativeConfig SpeculativeOf(const EngineCoreConfig& config) {
  protocol::SpeculativeConfig s;
  s.method = config.spec_method;
  s.num_speculative_tokens = config.num_speculative_tokens;
  s.prompt_lookup_min = config.prompt_lookup_min;
  s.prompt_lookup_max = config.prompt_lookup_max;
  return s;
}

// The settings every machine of one deployment must share, as (flag, value) pairs the DP
// handshake compares (a difference is fatal and named).
std::vector<std::pair<std::string, std::string>> SharedSettings(const EngineCoreConfig& config);

// Entry of the hidden `_engine-core` subcommand: loads the model, sizes the KV cache, says
// READY, then runs the engine loop until told to shut down. Returns the process exit code.
int RunEngineCoreCommand(int argc, char** argv);

// Entry of the hidden `_tp-worker` subcommand: TP rank ≥ 1 of one DP rank's engine core.
int RunTpWorkerCommand(int argc, char** argv);

}  // namespace tandem::apps
