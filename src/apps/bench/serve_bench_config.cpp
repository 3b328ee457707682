#include "apps/bench/serve_bench_config.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace tandem::apps::bench {

Status ServeBenchConfig::Validate() const {
  if (num_prompts <= 0) {
    return InvalidArgument(fmt::format("--num-prompts must be > 0; found {}", num_prompts));
  }
  if (max_concurrency < 0) {
    return InvalidArgument(fmt::format(
        "--max-concurrency must be >= 1 (or unset for unlimited); found {}", max_concurrency));
  }
  if (!(request_rate > 0)) {
    return InvalidArgument(
        fmt::format("--request-rate must be > 0 requests/s (or inf); found {}", request_rate));
  }
  if (!(burstiness > 0)) {
    return InvalidArgument(fmt::format("--burstiness must be > 0; found {}", burstiness));
  }
  if (dataset_name != "random") {
    return InvalidArgument(fmt::format(
        "--dataset-name '{}' is not supported; only 'random' is implemented", dataset_name));
  }
  if (random_input_len <= 0 || random_output_len <= 0) {
    return InvalidArgument(
        fmt::format("--random-input-len and --random-output-len must be > 0; found {} and {}",
                    random_input_len, random_output_len));
  }
  if (random_range_ratio < 0 || random_range_ratio >= 1) {
    return InvalidArgument(
        fmt::format("--random-range-ratio must be in [0, 1); found {}", random_range_ratio));
  }
  if (random_vocab_size < 4) {
    return InvalidArgument(
        fmt::format("--random-vocab-size must be >= 4; found {}", random_vocab_size));
  }
  if (long_request_fraction < 0 || long_request_fraction > 1) {
    return InvalidArgument(
        fmt::format("--long-request-fraction must be in [0, 1]; found {}", long_request_fraction));
  }
  if (!(long_request_multiplier >= 1)) {
    return InvalidArgument(
        fmt::format("--long-request-multiplier must be >= 1; found {}", long_request_multiplier));
  }
  if (!(request_timeout_s > 0)) {
    return InvalidArgument(
        fmt::format("--request-timeout must be > 0 seconds; found {}", request_timeout_s));
  }
  if (endpoint.empty() || endpoint[0] != '/') {
    return InvalidArgument(
        fmt::format("--endpoint must be a path starting with '/'; found '{}'", endpoint));
  }
  static const char* kMetricNames[] = {"ttft", "tpot", "itl", "e2el"};
  for (const std::string& m : percentile_metrics) {
    bool known = false;
    for (const char* name : kMetricNames) known = known || m == name;
    if (!known) {
      return InvalidArgument(fmt::format(
          "--percentile-metrics: unknown metric '{}'; expected any of ttft,tpot,itl,e2el", m));
    }
  }
  for (double p : metric_percentiles) {
    if (!(p >= 0 && p <= 100)) {
      return InvalidArgument(fmt::format("--metric-percentiles: {} is outside [0, 100]", p));
    }
  }
  return Status::Ok();
}

std::string ServeBenchConfig::ResultPath(const std::string& model_id) const {
  if (!save_result) return "";
  std::string name = result_filename;
  if (name.empty()) {
    std::string base = model_id.substr(model_id.find_last_of('/') + 1);
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
    std::string rate = std::isinf(request_rate) ? "inf" : fmt::format("{}", request_rate);
    name =
        fmt::format("{}-{}qps-{}-{}.json", IsChat() ? "openai-chat" : "openai", rate, base, stamp);
  }
  if (result_dir.empty()) return name;
  return result_dir + "/" + name;
}

}  // namespace tandem::apps::bench
