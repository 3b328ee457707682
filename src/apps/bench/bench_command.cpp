#include "apps/bench/bench_command.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "apps/bench/bench_flags.h"
#include "apps/bench/comm_bench.h"
#include "apps/bench/kernels_bench.h"
#include "apps/bench/serve_bench.h"
#include "apps/bench/structured_bench.h"

namespace tandem::apps {

int RunBenchCommand(int argc, char** argv) {
  using namespace tandem::apps::bench;
  std::vector<std::string> args = NormalizeBenchFlagSpellings(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());

  CLI::App app("Benchmarks: an OpenAI-API load generator and this machine's kernel speeds",
               "tandem bench");
  app.require_subcommand(1);

  ServeBenchConfig serve_config;
  ServeFlagStrings serve_strings;
  CLI::App* serve = app.add_subcommand(
      "serve", "Load-test an OpenAI-compatible server (like `vllm bench serve`)");
  AddServeBenchFlags(*serve, serve_config, serve_strings);

  KernelsBenchConfig kernels_config;
  CLI::App* kernels =
      app.add_subcommand("kernels", "Memory bandwidth and oneDNN GEMM throughput of this machine");
  AddKernelsBenchFlags(*kernels, kernels_config);

  CommBenchConfig comm_config;
  CLI::App* comm = app.add_subcommand(
      "comm", "All-reduce latency and bandwidth per collectives backend (shm, gloo)");
  comm->add_option("--backends", comm_config.backends, "Backends to measure (shm, gloo)")
      ->delimiter(',');
  comm->add_option("--ranks", comm_config.ranks, "Processes per group");
  comm->add_option("--min-bytes", comm_config.min_bytes, "Smallest message, bytes");
  comm->add_option("--max-bytes", comm_config.max_bytes, "Largest message, bytes (sizes step x4)");
  comm->add_option("--seconds-per-size", comm_config.seconds_per_size, "Time budget per size");

  StructuredBenchConfig structured_config;
  CLI::App* structured = app.add_subcommand(
      "structured", "Cost of structured-output token masks per row and per step of a batch");
  structured->add_option("model", structured_config.model, "Model folder or GGUF (its tokenizer)")
      ->required();
  structured->add_option("--tokenizer", structured_config.tokenizer,
                         "Tokenizer (default: the model's)");
  structured->add_option("--schema", structured_config.schema_json, "JSON Schema text, or @FILE")
      ->required();
  structured->add_option("--rows", structured_config.rows, "Sequences masked per step");
  structured->add_option("--steps", structured_config.steps, "Measured steps");
  structured->add_option("--warmup-steps", structured_config.warmup_steps,
                         "Steps before measuring (positions get built)");
  structured->add_option("--seed", structured_config.seed, "Seed of the random paths");

  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  Status status;
  if (serve->parsed()) {
    status = ApplyServeFlagStrings(serve_strings, serve_config);
    if (status.ok()) status = RunServeBench(serve_config);
  } else if (structured->parsed()) {
    status = RunStructuredBench(structured_config);
  } else if (comm->parsed()) {
    status = RunCommBench(comm_config);
  } else {
    status = RunKernelsBench(kernels_config);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "tandem bench: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace tandem::apps
