// ServeBenchConfig: everything `tandem bench serve` needs, with vLLM `vllm bench serve` defaults
// where the flag exists there. Flags are declared in serve_bench_flags.cpp.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::apps::bench {

struct ServeBenchConfig {
  // --- target ---
  std::string base_url = "http://127.0.0.1:8000";  // scheme://host:port[/prefix]; http only
  std::string host;                                // when set (or port set): overrides base_url
  int port = 0;                                    // 0 = not given
  std::string endpoint = "/v1/completions";        // or /v1/chat/completions
  std::string model;                               // empty = first id of GET /v1/models
  std::string api_key;                             // Bearer token; env OPENAI_API_KEY

  // --- load shape ---
  int num_prompts = 100;
  int max_concurrency = 0;  // 0 = unlimited (bounded by kMaxWorkerThreads)
  double request_rate = std::numeric_limits<double>::infinity();  // requests/s; inf = all at t=0
  double burstiness = 1.0;  // gamma shape of inter-arrival times; 1 = Poisson
  uint64_t seed = 0;

  // --- dataset (random only) ---
  std::string dataset_name = "random";
  int random_input_len = 32;        // prompt tokens (completions: exact; chat: words)
  int random_output_len = 128;      // max_tokens
  double random_range_ratio = 0.0;  // lengths uniform in [len*(1-r), len*(1+r)], r in [0, 1)
  int random_vocab_size = 512;  // prompt token ids uniform in [3, vocab); 512 fits every model here
  bool ignore_eos = false;
  double long_request_fraction = 0.0;  // share of requests whose output length is multiplied
  double long_request_multiplier = 1.0;

  // --- client ---
  double request_timeout_s = 600.0;   // idle-read timeout per request (no byte for this long)
  bool disable_initial_test = false;  // skip the single warm-up request before the run
  bool disable_tqdm = false;          // kept for vLLM compatibility: disables progress lines

  // --- output ---
  bool save_result = false;
  std::string result_dir;       // vLLM: --result-dir
  std::string result_filename;  // vLLM: --result-filename; --result-file PATH sets dir+name
  std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  std::vector<double> metric_percentiles = {50, 95, 99};

  // Returns InvalidArgument naming the flag when a value is out of range.
  Status Validate() const;

  // The result path when saving was asked for ("" otherwise). Default file name follows vLLM:
  // "<backend>-<rate>qps-<model base name>-<YYYYmmdd-HHMMSS>.json".
  std::string ResultPath(const std::string& model_id) const;

  bool IsChat() const { return endpoint.find("chat/completions") != std::string::npos; }
};

// The most worker threads (= requests in flight) one run uses when --max-concurrency is unset.
inline constexpr int kMaxWorkerThreads = 1024;

}  // namespace tandem::apps::bench
