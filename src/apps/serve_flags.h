// ServeFlags: every `tandem serve` flag, declared in one table (serve_flags.cpp) with its
// default, env var and help; the only place flags become config.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include <vector>
#include "protocol/speculative_config.h"

#include "core/status.h"
#include "http/tls_options.h"

namespace tandem::apps {

struct ServeFlags {
  // Model and text
  std::string model;      // GGUF file or HF folder (positional or --model)
  std::string tokenizer;  // empty = from the model
  std::string dtype = "auto";
  std::string kv_cache_dtype = "auto";     // --kv-cache-dtype
  std::string device = "auto";             // --device auto | cpu | cuda
  std::string quantization;                // --quantization / -q ("" = detect)
  std::string chat_template;               // file path; empty = the model's
  std::string generation_config = "auto";  // auto|vllm|PATH
  std::vector<std::string> served_model_names;
  bool trust_remote_code = false;            // no effect: tandem runs no model code
  std::string reasoning_parser;              // "" | qwen3: split <think>…</think> off
  std::string reasoning_field = "both";      // both | reasoning | reasoning_content
  bool enable_auto_tool_choice = false;      // let the model decide to call tools
  bool trust_request_chat_template = false;  // requests may bring their own chat_template
  std::string tool_call_parser;              // "" | hermes | qwen3_coder
  std::string default_chat_template_kwargs;  // JSON object merged under each request's
  // Per-request bounds on chat input and on each chat template render (ServerConfig).
  int max_chat_messages = 10000;
  int max_chat_tools = 1024;
  int chat_template_max_recursion = 64;
  int64_t chat_template_max_loop_iterations = 1000000;
  int64_t chat_template_max_output_bytes = 16 << 20;
  double chat_template_timeout = 10.0;   // seconds
  double stalled_client_timeout = 30.0;  // seconds a client may leave a response unread
  int64_t limit_concurrency = 8192;      // open connections at most (uvicorn's flag)
  double shutdown_timeout = 0;           // SIGTERM: seconds in-flight requests may finish in
  // Server
  std::string host = "0.0.0.0";
  int port = 8000;
  std::string api_key;                           // also TANDEM_API_KEY / VLLM_API_KEY
  std::string disable_access_log_for_endpoints;  // comma-separated paths
  bool disable_log_requests = false;          // vLLM's old switch; requests are not logged anyway
  bool enable_log_requests = false;           // log each request's id and sampling params (INFO)
  int max_log_len = -1;                       // prompt chars / token ids logged (DEBUG); -1 = all
  bool enable_prompt_tokens_details = false;  // usage.prompt_tokens_details.cached_tokens
  bool ui = true;                             // --ui / --no-ui: the playground page at /
  int api_server_count = -1;                  // -1 = number of local DP ranks
  // Scheduler and cache
  int max_model_len = 0;  // 0 = the model's context length
  int max_num_seqs = 256;
  int max_num_batched_tokens = 0;  // 0 = max(2048, ...) as vLLM's chunked-prefill default
  int block_size = 16;
  bool enable_prefix_caching = true;
  bool enable_prefix_caching_given = false;  // --enable-prefix-caching was on the command line
  double gpu_memory_utilization = 0.9;
  int64_t kv_cache_memory_bytes = 0;  // 0 = from gpu_memory_utilization
  int64_t seed = 0;
  int max_logprobs = 20;
  int num_threads = 0;  // CPU threads for the forward pass; 0 = all cores
  // Parallelism (beyond 1: not built yet)
  int tensor_parallel_size = 1;
  int data_parallel_size = 1;
  int data_parallel_size_local = -1;
  int data_parallel_start_rank = 0;
  std::string data_parallel_address;
  int data_parallel_rpc_port = 29550;
  std::string data_parallel_load_balancer = "least-loaded";  // | round-robin
  bool headless = false;
  bool enable_expert_parallel = false;
  std::string speculative_config;           // JSON, as given
  protocol::SpeculativeConfig speculative;  // parsed from it by ValidateServeFlags
  // Accelerator-only knobs: accepted, logged as having no effect on CPU.
  std::string compilation_config;
  std::string additional_config;
  bool enable_cpu_binding = false;  // --additional-config '{"enable_cpu_binding": true}'
  std::string q8_0_dot = "int8";    // --additional-config '{"q8_0_dot": "float32"}'
  int32_t profile_steps = 0;        // --additional-config '{"profile_steps": N}' (0 = off)
  std::vector<std::string> additional_config_ignored;  // other keys (logged by name)
  bool async_scheduling = false;
  bool enforce_eager = false;
  // What the command line gave, for the start-up log (ParseServeFlags fills them).
  std::vector<std::string> given_flags;         // long names without "--", e.g. "allowed-origins"
  struct ConfigFileUse {                        // what `--config FILE.yaml` gave (ExpandConfigFile)
    std::string path;                           // "" = no --config
    std::vector<std::string> flags_taken;       // flag names the file gave, in its order
    std::vector<std::string> flags_overridden;  // the file's flags the command line gives too
  };
  ConfigFileUse config_file;
  // vLLM's flags that tandem takes so that vLLM launch scripts run unchanged
  // (serve_flags_compat.cpp): honoured, logged once as having no effect, or refused by name.
  std::string root_path;                   // --root-path: a prefix stripped from request paths
  std::string override_generation_config;  // --override-generation-config: JSON over the defaults
  bool enable_chunked_prefill = true;      // always on (as vLLM V1); --no- is logged
  int pipeline_parallel_size = 1;          // -pp; > 1 refused
  std::optional<double> swap_space;        // GiB; no effect on CPU
  std::optional<double> cpu_offload_gb;    // no effect on CPU
  bool disable_log_stats = false;          // tandem logs no periodic stats
  std::optional<std::string> uvicorn_log_level;  // no uvicorn here
  std::string scheduling_policy = "fcfs";        // | priority
  std::string distributed_executor_backend;      // mp | uni; ray, external_launcher: refused
  std::string data_parallel_backend = "mp";      // -dpb; ray: refused
  bool data_parallel_hybrid_lb = false;          // each machine's API servers serve its own ranks
  bool data_parallel_external_lb = false;        // one API deployment per rank (set by -dpn)
  int data_parallel_rank = -1;                   // -dpn: external load balancing, this rank
  bool enable_server_load_tracking = false;      // GET /load counts requests in flight
  bool enable_request_id_headers = false;        // X-Request-Id on every response
  std::string allowed_origins = "[\"*\"]";       // CORS, JSON lists as vLLM takes them
  std::string allowed_methods = "[\"*\"]";
  std::string allowed_headers = "[\"*\"]";
  bool allow_credentials = false;
  std::string ssl_keyfile;          // HTTPS: PEM private key
  std::string ssl_certfile;         // HTTPS: PEM certificate chain
  std::string ssl_ca_certs;         // CAs for client certificates
  int ssl_cert_reqs = 0;            // 0 none, 1 optional, 2 required (Python's ssl)
  std::string ssl_ciphers;          // OpenSSL cipher list
  bool enable_ssl_refresh = false;  // reload the files when they change
};

// Hybrid or external DP load balancing: this machine's API servers serve only its own DP
// ranks, --data-parallel-start-rank … + --data-parallel-size-local - 1
// (docs/design/dp-load-balancing-modes.md).
inline bool LocalRanksOnly(const ServeFlags& f) {
  return f.data_parallel_hybrid_lb || f.data_parallel_external_lb;
}

// Adds every serve flag to `app`, bound to `flags` (DeclareCompatFlags among them).
void DeclareServeFlags(CLI::App& app, ServeFlags& flags);

// vLLM's flags kept for its launch scripts (serve_flags_compat.cpp).
void DeclareCompatFlags(CLI::App& app, ServeFlags& flags);
// Refuses, naming the flag, what tandem has not built (pipeline parallelism, Ray), bad JSON
// and TLS files that do not load.
// Errors: kInvalidArgument.
Status ValidateCompatFlags(const ServeFlags& flags);
// The --ssl-* flags as the HTTP server's TLS settings (not enabled without key and cert).
http::TlsOptions TlsOptionsFromFlags(const ServeFlags& flags);
// One line per given flag that has no effect here, saying why.
void LogCompatFlags(const ServeFlags& flags);

// vLLM's human-readable integers: "32k" = 32000, "32K" = 32768, m/M and g/G likewise
// (lowercase decimal, uppercase binary; a lowercase value may have a fraction: "1.5k").
// Errors: kInvalidArgument naming `flag` and the value.
Result<int64_t> ParseHumanReadableInt(const std::string& flag, const std::string& value);

// A flag's JSON list of strings (vLLM's --allowed-origins and kin). Errors: kInvalidArgument
// naming the flag.
Result<std::vector<std::string>> ParseStringList(const std::string& flag, const std::string& value);

// `--config FILE.yaml` (vLLM's; serve_config_file.cpp): its keys are flag names (dashes or
// underscores), their values the flags' values (true/false for switches, lists for repeated
// values, mappings as JSON). Returns `args` with the file's flags appended, except those the
// command line gives itself (the command line wins), and records in `use` what the file gave.
// Errors: kInvalidArgument naming the file and the key.
Result<std::vector<std::string>> ExpandConfigFile(std::vector<std::string> args,
                                                  ServeFlags::ConfigFileUse* use);

// After parsing: env fallbacks (VLLM_API_KEY), JSON-valued flags must parse, features not
// built yet stop start-up naming the flag, the KV cache fits in physical memory
// (CheckKvCacheFitsInMemory). Each number's own range is checked as it is parsed (IntRange,
// NumberRange in serve_flag_helpers.h). Errors: kInvalidArgument / kUnimplemented.
Status ValidateServeFlags(ServeFlags& flags);

// --kv-cache-memory-bytes times the engine processes on this machine (local DP ranks x TP ranks,
// after ValidateServeFlags resolved them) must fit in `physical_memory_bytes` (0 = unknown: not
// checked). Errors: kInvalidArgument naming the flag, both numbers in bytes and GiB.
Status CheckKvCacheFitsInMemory(const ServeFlags& flags, int64_t physical_memory_bytes);

// Logs the accepted-but-ineffective accelerator flags, then LogCompatFlags and LogAppliedFlags.
void LogIneffectiveFlags(const ServeFlags& flags);

// One INFO line per given vLLM flag that tandem honours but no other start-up line names,
// saying what it does with it (serve_flags_compat.cpp): a flag is never silently taken.
void LogAppliedFlags(const ServeFlags& flags);

// vLLM spellings: `--a_b` → `--a-b` (the name part only; values are untouched); the short
// forms -tp -dp -pp -dpl -dpa -dpp -dpr -dpn -dpb -ep → their long flags, as vLLM maps them
// (-dpr is --data-parallel-start-rank, -dpn --data-parallel-rank), also as "-dpn=1".
std::vector<std::string> NormalizeFlagSpellings(int argc, char** argv);

}  // namespace tandem::apps
