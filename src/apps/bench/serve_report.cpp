#include "apps/bench/serve_report.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace tandem::apps::bench {
namespace {

struct MetricInfo {
  const char* key;     // "ttft"
  const char* name;    // "TTFT"
  const char* header;  // section title
};

constexpr MetricInfo kMetrics[] = {
    {"ttft", "TTFT", "Time to First Token"},
    {"tpot", "TPOT", "Time per Output Token (excl. 1st token)"},
    {"itl", "ITL", "Inter-token Latency"},
    {"e2el", "E2EL", "End-to-end Latency"},
};

const MetricStats& StatsOf(const ServeMetrics& m, const std::string& key) {
  if (key == "ttft") return m.ttft;
  if (key == "tpot") return m.tpot;
  if (key == "itl") return m.itl;
  return m.e2el;
}

bool Selected(const ServeBenchConfig& config, const std::string& key) {
  for (const std::string& k : config.percentile_metrics) {
    if (k == key) return true;
  }
  return false;
}

// "99" for 99.0, "99.9" for 99.9 (vLLM's key spelling).
std::string PercentileWord(double p) {
  return p == std::floor(p) ? fmt::format("{}", static_cast<int>(p)) : fmt::format("{}", p);
}

}  // namespace

std::string FormatServeReport(const ServeBenchConfig& config, const ServeMetrics& m,
                              int num_long_requests) {
  std::string s;
  auto row = [&s](const std::string& label, const std::string& value) {
    s += fmt::format("{:<40} {:<10}\n", label, value);
  };
  auto num = [](double v) { return fmt::format("{:.2f}", v); };
  s += fmt::format("{:=^50}\n", " Serving Benchmark Result ");
  row("Successful requests:", std::to_string(m.completed));
  row("Failed requests:", std::to_string(m.failed));
  if (config.max_concurrency > 0) {
    row("Maximum request concurrency:", std::to_string(config.max_concurrency));
  }
  if (num_long_requests > 0) {
    row(fmt::format("Long requests (x{} output):", config.long_request_multiplier),
        std::to_string(num_long_requests));
  }
  row("Benchmark duration (s):", num(m.duration_s));
  row("Total input tokens:", std::to_string(m.total_input));
  row("Total generated tokens:", std::to_string(m.total_output));
  row("Request throughput (req/s):", num(m.request_throughput));
  row("Output token throughput (tok/s):", num(m.output_throughput));
  row("Total token throughput (tok/s):", num(m.total_token_throughput));
  for (const MetricInfo& info : kMetrics) {
    if (!Selected(config, info.key)) continue;
    const MetricStats& st = StatsOf(m, info.key);
    s += fmt::format("{:-^50}\n", info.header);
    row(fmt::format("Mean {} (ms):", info.name), num(st.mean_ms));
    row(fmt::format("Median {} (ms):", info.name), num(st.median_ms));
    for (const auto& [p, value] : st.percentiles_ms) {
      row(fmt::format("P{} {} (ms):", PercentileWord(p), info.name), num(value));
    }
  }
  s += std::string(50, '=') + "\n";
  if (m.failed > 0) s += fmt::format("First error: {}\n", m.first_error);
  return s;
}

nlohmann::json ServeResultJson(const ServeBenchConfig& config, const std::string& model_id,
                               const ServeMetrics& m, const std::vector<RequestOutput>& outputs) {
  using nlohmann::json;
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y%m%d-%H%M%S", std::localtime(&now));
  json j;
  j["date"] = date;
  j["backend"] = config.IsChat() ? "openai-chat" : "openai";
  j["endpoint"] = config.endpoint;
  j["model_id"] = model_id;
  j["num_prompts"] = config.num_prompts;
  j["request_rate"] = std::isinf(config.request_rate) ? json("inf") : json(config.request_rate);
  j["burstiness"] = config.burstiness;
  j["max_concurrency"] = config.max_concurrency > 0 ? json(config.max_concurrency) : json();
  j["random_input_len"] = config.random_input_len;
  j["random_output_len"] = config.random_output_len;
  j["random_range_ratio"] = config.random_range_ratio;
  j["long_request_fraction"] = config.long_request_fraction;
  j["long_request_multiplier"] = config.long_request_multiplier;
  j["seed"] = config.seed;

  j["duration"] = m.duration_s;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["total_input_tokens"] = m.total_input;
  j["total_output_tokens"] = m.total_output;
  j["request_throughput"] = m.request_throughput;
  j["output_throughput"] = m.output_throughput;
  j["total_token_throughput"] = m.total_token_throughput;
  for (const std::string& key : config.percentile_metrics) {
    const MetricStats& st = StatsOf(m, key);
    j["mean_" + key + "_ms"] = st.mean_ms;
    j["median_" + key + "_ms"] = st.median_ms;
    j["std_" + key + "_ms"] = st.std_ms;
    for (const auto& [p, value] : st.percentiles_ms) {
      j["p" + PercentileWord(p) + "_" + key + "_ms"] = value;
    }
  }

  json input_lens = json::array(), output_lens = json::array(), ttfts = json::array(),
       itls = json::array(), e2els = json::array(), start_times = json::array(),
       is_long = json::array(), texts = json::array(), errors = json::array();
  for (const RequestOutput& out : outputs) {
    input_lens.push_back(out.prompt_len);
    output_lens.push_back(out.success ? out.output_len : 0);
    ttfts.push_back(out.ttft_s);
    itls.push_back(out.itl_s);
    e2els.push_back(out.latency_s);
    start_times.push_back(out.start_s);
    is_long.push_back(out.is_long);
    texts.push_back(out.generated_text);
    errors.push_back(out.error);
  }
  j["input_lens"] = std::move(input_lens);
  j["output_lens"] = std::move(output_lens);
  j["ttfts"] = std::move(ttfts);
  j["itls"] = std::move(itls);
  j["e2els"] = std::move(e2els);
  j["start_times"] = std::move(start_times);
  j["is_long"] = std::move(is_long);
  j["generated_texts"] = std::move(texts);
  j["errors"] = std::move(errors);
  return j;
}

}  // namespace tandem::apps::bench
