#include "apps/bench/bench_flags.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <sstream>

namespace tandem::apps::bench {
namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

Result<double> ParseNumber(const std::string& flag, const std::string& text) {
  if (text == "inf" || text == "Inf" || text == "INF") {
    return std::numeric_limits<double>::infinity();
  }
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return InvalidArgument(fmt::format("{}: expected a number; found '{}'", flag, text));
}

}  // namespace

void AddServeBenchFlags(CLI::App& app, ServeBenchConfig& c, ServeFlagStrings& s) {
  app.add_option("--base-url", c.base_url, "Server URL, http://host:port[/prefix]")
      ->capture_default_str();
  app.add_option("--host", c.host, "Server host (with --port, instead of --base-url)");
  app.add_option("--port", c.port, "Server port (with --host, instead of --base-url)");
  app.add_option("--endpoint", c.endpoint, "API path: /v1/completions or /v1/chat/completions")
      ->capture_default_str();
  app.add_option("--backend", s.backend,
                 "vLLM compatibility: openai-chat selects /v1/chat/completions");
  app.add_option("--model", c.model, "Model id to send (default: first id of GET /v1/models)");
  app.add_option("--api-key", c.api_key, "Bearer API key")->envname("OPENAI_API_KEY");
  app.add_option("--num-prompts", c.num_prompts, "Number of requests")->capture_default_str();
  app.add_option("--max-concurrency", c.max_concurrency,
                 "Most requests in flight at once (default: unlimited)");
  app.add_option("--request-rate", s.request_rate,
                 "Requests per second; inf sends all at once, else Poisson arrivals")
      ->capture_default_str();
  app.add_option("--burstiness", c.burstiness,
                 "Gamma shape of inter-arrival gaps (1 = Poisson, <1 burstier)")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "Seed of prompts, lengths and arrivals")->capture_default_str();
  app.add_option("--dataset-name", c.dataset_name, "Dataset (only 'random')")
      ->capture_default_str();
  app.add_option("--random-input-len", c.random_input_len, "Prompt tokens per request")
      ->capture_default_str();
  app.add_option("--random-output-len", c.random_output_len, "max_tokens per request")
      ->capture_default_str();
  app.add_option("--random-range-ratio", c.random_range_ratio,
                 "Lengths uniform in [len*(1-r), len*(1+r)]")
      ->capture_default_str();
  app.add_option("--random-vocab-size", c.random_vocab_size,
                 "Prompt token ids are drawn from [3, this)")
      ->capture_default_str();
  app.add_flag("--ignore-eos", c.ignore_eos, "Send ignore_eos so every request runs to max_tokens");
  app.add_option("--long-request-fraction", c.long_request_fraction,
                 "Share of requests whose output length is multiplied (skewed load)")
      ->capture_default_str();
  app.add_option("--long-request-multiplier", c.long_request_multiplier,
                 "Output-length multiplier of the long requests")
      ->capture_default_str();
  app.add_option("--request-timeout", c.request_timeout_s,
                 "Seconds a request may wait for its next byte before it fails")
      ->capture_default_str();
  app.add_flag("--disable-initial-test", c.disable_initial_test,
               "Skip the single warm-up request sent before the run");
  app.add_flag("--disable-tqdm", c.disable_tqdm, "No progress lines");
  app.add_flag("--save-result", c.save_result, "Write the result JSON");
  app.add_option("--result-dir", c.result_dir, "Folder of the result JSON");
  app.add_option("--result-filename", c.result_filename, "Name of the result JSON");
  app.add_option("--result-file", s.result_file, "Write the result JSON to exactly this path");
  app.add_option("--percentile-metrics", s.percentile_metrics,
                 "Metrics to report percentiles of (ttft,tpot,itl,e2el)")
      ->capture_default_str();
  app.add_option("--metric-percentiles", s.metric_percentiles,
                 "Percentiles to report, comma-separated")
      ->capture_default_str();
}

Status ApplyServeFlagStrings(const ServeFlagStrings& s, ServeBenchConfig& c) {
  TANDEM_ASSIGN_OR_RETURN(c.request_rate, ParseNumber("--request-rate", s.request_rate));
  c.percentile_metrics = SplitCommas(s.percentile_metrics);
  c.metric_percentiles.clear();
  for (const std::string& p : SplitCommas(s.metric_percentiles)) {
    TANDEM_ASSIGN_OR_RETURN(double v, ParseNumber("--metric-percentiles", p));
    c.metric_percentiles.push_back(v);
  }
  if (!s.result_file.empty()) {
    c.save_result = true;
    c.result_dir.clear();
    c.result_filename = s.result_file;
  }
  if (s.backend == "openai-chat") {
    if (c.endpoint == "/v1/completions") c.endpoint = "/v1/chat/completions";
  } else if (!s.backend.empty() && s.backend != "openai" && s.backend != "vllm") {
    return InvalidArgument(fmt::format(
        "--backend '{}' is not supported; expected openai, vllm or openai-chat", s.backend));
  }
  return Status::Ok();
}

void AddKernelsBenchFlags(CLI::App& app, KernelsBenchConfig& c) {
  app.add_option("--bandwidth-mib", c.bandwidth_mib, "Bandwidth buffer size, MiB (>= 512)")
      ->capture_default_str();
  app.add_option("--threads", c.num_threads, "Bandwidth threads (0 = all hardware threads)")
      ->capture_default_str();
  app.add_option("--repeats", c.repeats, "Best of this many timings")->capture_default_str();
  app.add_option("--gemm-m", c.gemm_m, "GEMM rows (batch tokens), comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--gemm-k", c.gemm_k, "GEMM inner dimension")->capture_default_str();
  app.add_option("--gemm-n", c.gemm_n, "GEMM output columns")->capture_default_str();
  app.add_option("--json", c.json_path, "Save results as JSON to this path");
}

std::vector<std::string> NormalizeBenchFlagSpellings(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& arg : args) {
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    const size_t name_end = std::min(arg.find('='), arg.size());
    for (size_t i = 2; i < name_end; ++i) {
      if (arg[i] == '_') arg[i] = '-';
    }
  }
  return args;
}

}  // namespace tandem::apps::bench
