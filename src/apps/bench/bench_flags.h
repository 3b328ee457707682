// The flag tables of `tandem bench serve` and `tandem bench kernels` (CLI11), one place per
// subcommand, with the env-var names they read.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "apps/bench/kernels_bench.h"
#include "apps/bench/serve_bench_config.h"

namespace tandem::apps::bench {

// String-valued flags that need parsing after CLI11 (lists, "inf").
struct ServeFlagStrings {
  std::string request_rate = "inf";
  std::string percentile_metrics = "ttft,tpot,itl,e2el";
  std::string metric_percentiles = "50,95,99";
  std::string result_file;  // --result-file PATH: save to exactly PATH
  std::string backend;      // vLLM --backend: openai | openai-chat | vllm
};

// Declares the serve flags on `app`, writing into `config` / `strings`.
void AddServeBenchFlags(CLI::App& app, ServeBenchConfig& config, ServeFlagStrings& strings);

// Folds `strings` into `config` after parsing; InvalidArgument naming the flag on a bad value.
Status ApplyServeFlagStrings(const ServeFlagStrings& strings, ServeBenchConfig& config);

// Declares the kernels flags on `app`, writing into `config`.
void AddKernelsBenchFlags(CLI::App& app, KernelsBenchConfig& config);

// argv with every `--a_b[=v]` flag name rewritten to `--a-b[=v]` (values untouched; nothing
// after a bare `--`), so both spellings reach CLI11's one declared name.
std::vector<std::string> NormalizeBenchFlagSpellings(int argc, char** argv);

}  // namespace tandem::apps::bench
