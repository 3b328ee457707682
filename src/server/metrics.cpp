#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/check.h"

namespace tandem::server {
namespace {

// vLLM's buckets (v1/metrics/loggers.py).
const std::vector<double>& TtftBounds() {
  static const std::vector<double> b = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                        0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                        20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
  return b;
}
// inter_token_latency, time_per_output_token and request_time_per_output_token.
const std::vector<double>& ItlBounds() {
  static const std::vector<double> b = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                        0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
  return b;
}
// e2e latency and the queue / prefill / decode / inference times.
const std::vector<double>& RequestLatencyBounds() {
  static const std::vector<double> b = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                        5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                        60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  return b;
}
// Token counts per request: vLLM's build_1_2_5_buckets(max_model_len) is 1, 2, 5, 10, ... up
// to max_model_len. Observations are counted against the whole 1-2-5 ladder up to 5e7; a
// render shows the bounds up to max_model_len (the cumulative counts at those are exact).
const std::vector<double>& TokenCountBounds() {
  static const std::vector<double> b = [] {
    std::vector<double> bounds;
    for (double decade = 1; decade <= 1e7; decade *= 10) {
      for (double m : {1.0, 2.0, 5.0}) bounds.push_back(m * decade);
    }
    return bounds;
  }();
  return b;
}
const std::vector<double>& IterationTokensBounds() {
  static const std::vector<double> b(std::begin(protocol::kIterationTokensBuckets),
                                     std::end(protocol::kIterationTokensBuckets));
  return b;
}

void Observe(HistogramTotals& h, const std::vector<double>& upper_bounds, double value) {
  const auto it = std::lower_bound(upper_bounds.begin(), upper_bounds.end(), value);
  ++h.bucket_counts[it - upper_bounds.begin()];  // last slot: above every bound (+Inf only)
  ++h.count;
  h.sum += value;
}

// A bucket bound as Prometheus' Python client writes it (floatToGoString), so that `le` label
// values are vLLM's exactly: "0.5", "1.0", "2560.0", "2e+06".
std::string GoFloat(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  const size_t dot = s.find('.');
  if (v > 0 && dot != std::string::npos && dot > 6 && s.find('e') == std::string::npos) {
    std::string mantissa = s.substr(0, 1) + "." + s.substr(1, dot - 1) + s.substr(dot + 1);
    while (!mantissa.empty() && (mantissa.back() == '0' || mantissa.back() == '.')) {
      mantissa.pop_back();
    }
    return fmt::format("{}e+0{}", mantissa, dot - 1);
  }
  return s;
}

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

const char* kPrefixes[] = {"tandem:", "vllm:"};

// Writes metric families under both prefixes (tandem-only ones under tandem: alone); every
// series starts with model_name.
class Writer {
 public:
  // (labels after model_name, e.g. `engine="0"`; value)
  using Series = std::vector<std::pair<std::string, double>>;
  using HistSeries = std::vector<std::pair<std::string, HistogramTotals>>;

  explicit Writer(const std::string& model_name)
      : labels_(fmt::format("model_name=\"{}\"", EscapeLabelValue(model_name))) {}

  void Family(const char* name, const char* type, const char* help, const Series& series,
              bool tandem_only = false) {
    for (const char* prefix : kPrefixes) {
      if (tandem_only && prefix != kPrefixes[0]) continue;
      Header(prefix, name, type, help);
      for (const auto& [extra, value] : series) {
        out_ += fmt::format("{}{}{{{}{}{}}} {}\n", prefix, name, labels_, extra.empty() ? "" : ",",
                            extra, value);
      }
    }
  }

  // Shows the first `num_bounds` of `upper_bounds` (the observations were counted against all
  // of them), then +Inf.
  void Hist(const char* name, const char* help, const std::vector<double>& upper_bounds,
            size_t num_bounds, const HistSeries& series) {
    for (const char* prefix : kPrefixes) {
      Header(prefix, name, "histogram", help);
      for (const auto& [extra, h] : series) {
        const std::string labels = labels_ + "," + extra;
        uint64_t cumulative = 0;
        for (size_t i = 0; i < num_bounds; ++i) {
          cumulative += h.bucket_counts[i];
          out_ += fmt::format("{}{}_bucket{{{},le=\"{}\"}} {}\n", prefix, name, labels,
                              GoFloat(upper_bounds[i]), cumulative);
        }
        out_ += fmt::format("{}{}_bucket{{{},le=\"+Inf\"}} {}\n", prefix, name, labels, h.count);
        out_ += fmt::format("{}{}_count{{{}}} {}\n", prefix, name, labels, h.count);
        out_ += fmt::format("{}{}_sum{{{}}} {}\n", prefix, name, labels, h.sum);
      }
    }
  }
  void Hist(const char* name, const char* help, const std::vector<double>& upper_bounds,
            const HistSeries& series) {
    Hist(name, help, upper_bounds, upper_bounds.size(), series);
  }

  std::string Take() { return std::move(out_); }

 private:
  void Header(const char* prefix, const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {}{} {}\n# TYPE {}{} {}\n", prefix, name, help, prefix, name, type);
  }
  std::string labels_;
  std::string out_;
};

std::string EngineLabel(size_t dp_rank) { return fmt::format("engine=\"{}\"", dp_rank); }

// The engine's cumulative iteration-tokens histogram as a HistogramTotals.
HistogramTotals IterationTokens(const protocol::EngineStats& s) {
  HistogramTotals h;
  for (size_t i = 0;
       i < s.iteration_tokens_buckets.size() && i < static_cast<size_t>(kMaxHistogramBuckets);
       ++i) {
    h.bucket_counts[i] = static_cast<uint64_t>(s.iteration_tokens_buckets[i]);
    h.count += h.bucket_counts[i];
  }
  h.sum = static_cast<double>(s.iteration_tokens_sum);
  return h;
}

// The engine-side series of every rank: scheduler and cache state, counted by the engines.
void WriteEngineSeries(Writer& w, const std::vector<protocol::EngineStats>& per_rank,
                       const std::vector<bool>& alive, const std::vector<size_t>& shown);

}  // namespace

Metrics& Metrics::Global() {
  static Metrics* metrics = new Metrics();  // never destroyed: used until process exit
  return *metrics;
}

Metrics::Metrics() {
  for (const auto* bounds : {&TtftBounds(), &ItlBounds(), &RequestLatencyBounds(),
                             &TokenCountBounds(), &IterationTokensBounds()}) {
    TANDEM_CHECK(bounds->size() < static_cast<size_t>(kMaxHistogramBuckets))
        << "a histogram has more bounds than HistogramTotals has slots (+Inf needs one)";
  }
}

void Metrics::AddPromptTokens(int32_t dp_rank, int64_t n) {
  std::lock_guard l(mutex_);
  totals_.Engine(dp_rank).prompt_tokens += n;
  PublishLocked(dp_rank);
}
void Metrics::AddGenerationTokens(int32_t dp_rank, int64_t n) {
  std::lock_guard l(mutex_);
  totals_.Engine(dp_rank).generation_tokens += n;
  PublishLocked(dp_rank);
}
void Metrics::AddRequestSuccess(int32_t dp_rank, const std::string& reason) {
  std::lock_guard l(mutex_);
  EngineTotals& e = totals_.Engine(dp_rank);
  for (int i = 0; i < kNumFinishReasons; ++i) {
    if (reason == kFinishReasons[i]) ++e.request_success[i];
  }
  PublishLocked(dp_rank);
}
void Metrics::ObserveTimeToFirstToken(int32_t dp_rank, double s) {
  std::lock_guard l(mutex_);
  Observe(totals_.Engine(dp_rank).ttft, TtftBounds(), s);
  PublishLocked(dp_rank);
}
void Metrics::ObserveInterTokenLatency(int32_t dp_rank, double s, int32_t count) {
  std::lock_guard l(mutex_);
  EngineTotals& e = totals_.Engine(dp_rank);
  for (int32_t k = 0; k < count; ++k) Observe(e.itl, ItlBounds(), s);
  PublishLocked(dp_rank);
}
void Metrics::ObserveFinishedRequest(int32_t dp_rank, const FinishedRequestStats& r) {
  std::lock_guard l(mutex_);
  EngineTotals& e = totals_.Engine(dp_rank);
  for (int i = 0; i < kNumFinishReasons; ++i) {
    if (r.finish_reason == kFinishReasons[i]) ++e.request_success[i];
  }
  Observe(e.e2e, RequestLatencyBounds(), r.e2e_latency_s);
  Observe(e.queue_time, RequestLatencyBounds(), r.queued_time_s);
  Observe(e.prefill_time, RequestLatencyBounds(), r.prefill_time_s);
  Observe(e.decode_time, RequestLatencyBounds(), r.decode_time_s);
  Observe(e.inference_time, RequestLatencyBounds(), r.inference_time_s);
  Observe(e.request_time_per_output_token, ItlBounds(), r.mean_time_per_output_token_s);
  Observe(e.request_prompt_tokens, TokenCountBounds(), r.num_prompt_tokens);
  Observe(e.request_generation_tokens, TokenCountBounds(), r.num_generation_tokens);
  PublishLocked(dp_rank);
}

void Metrics::Reset() {
  std::lock_guard l(mutex_);
  totals_ = MetricsTotals{};
  stalled_client_aborts_ = 0;
  PublishLocked();
}

void Metrics::ShareVia(std::unique_ptr<MetricsShare> share, int slot) {
  std::lock_guard l(mutex_);
  share_ = std::move(share);
  slot_ = slot;
  PublishLocked();
}

void Metrics::PublishLocked(int32_t dp_rank) {
  if (!share_) return;
  if (dp_rank >= 0) {
    share_->Store(slot_, dp_rank, totals_.Engine(dp_rank));
  } else {
    share_->Store(slot_, totals_);
  }
}

std::string Metrics::Render(const std::string& model_name, int32_t max_model_len,
                            const protocol::EngineStats& stats) const {
  return Render(model_name, max_model_len, std::vector<protocol::EngineStats>{stats},
                std::vector<bool>{true});
}

std::string Metrics::Render(const std::string& model_name, int32_t max_model_len,
                            const std::vector<protocol::EngineStats>& per_rank,
                            const std::vector<bool>& alive, const std::vector<bool>& served) const {
  MetricsTotals totals;
  {
    std::lock_guard l(mutex_);
    totals = totals_;
    if (share_) totals.Add(share_->SumOfOthers(slot_));
  }
  if (totals.engines.size() < per_rank.size()) totals.engines.resize(per_rank.size());
  Writer w(model_name);
  std::vector<size_t> shown;  // the ranks this API server serves
  for (size_t r = 0; r < per_rank.size(); ++r) {
    if (served.empty() || (r < served.size() && served[r])) shown.push_back(r);
  }
  WriteEngineSeries(w, per_rank, alive, shown);

  // Counted by this API server (and its siblings), one series per DP rank.
  auto counter = [&](auto value_of) {
    Writer::Series series;
    for (size_t r : shown) {
      series.emplace_back(EngineLabel(r), static_cast<double>(value_of(totals.engines[r])));
    }
    return series;
  };
  auto hist = [&](HistogramTotals EngineTotals::*member) {
    Writer::HistSeries series;
    for (size_t r : shown) {
      series.emplace_back(EngineLabel(r), totals.engines[r].*member);
    }
    return series;
  };
  w.Family("http_stalled_client_aborts_total", "counter",
           "Responses aborted because the client stopped reading them (this API server).",
           {{"", static_cast<double>(stalled_client_aborts_.load())}},
           /*tandem_only=*/true);  // vLLM has no such series, and it has no engine label
  w.Family("prompt_tokens_total", "counter", "Number of prefill tokens processed.",
           counter([](const EngineTotals& e) { return e.prompt_tokens; }));
  w.Family("generation_tokens_total", "counter", "Number of generation tokens processed.",
           counter([](const EngineTotals& e) { return e.generation_tokens; }));
  Writer::Series success;
  for (size_t r : shown) {
    for (int i = 0; i < kNumFinishReasons; ++i) {
      success.emplace_back(
          fmt::format("{},finished_reason=\"{}\"", EngineLabel(r), kFinishReasons[i]),
          static_cast<double>(totals.engines[r].request_success[i]));
    }
  }
  w.Family("request_success_total", "counter", "Count of successfully processed requests.",
           success);
  w.Hist("time_to_first_token_seconds", "Histogram of time to first token in seconds.",
         TtftBounds(), hist(&EngineTotals::ttft));
  w.Hist("inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ItlBounds(),
         hist(&EngineTotals::itl));
  w.Hist("time_per_output_token_seconds",
         "Histogram of time per output token in seconds.DEPRECATED: Use "
         "vllm:inter_token_latency_seconds instead.",
         ItlBounds(), hist(&EngineTotals::itl));
  w.Hist("request_time_per_output_token_seconds",
         "Histogram of time_per_output_token_seconds per request.", ItlBounds(),
         hist(&EngineTotals::request_time_per_output_token));
  w.Hist("e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
         RequestLatencyBounds(), hist(&EngineTotals::e2e));
  w.Hist("request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
         RequestLatencyBounds(), hist(&EngineTotals::queue_time));
  w.Hist("request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
         RequestLatencyBounds(), hist(&EngineTotals::inference_time));
  w.Hist("request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
         RequestLatencyBounds(), hist(&EngineTotals::prefill_time));
  w.Hist("request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
         RequestLatencyBounds(), hist(&EngineTotals::decode_time));
  const std::vector<double>& token_bounds = TokenCountBounds();
  const size_t num_token_bounds =
      static_cast<size_t>(std::upper_bound(token_bounds.begin(), token_bounds.end(),
                                           static_cast<double>(max_model_len)) -
                          token_bounds.begin());
  w.Hist("request_prompt_tokens", "Number of prefill tokens processed.", token_bounds,
         num_token_bounds, hist(&EngineTotals::request_prompt_tokens));
  w.Hist("request_generation_tokens", "Number of generation tokens processed.", token_bounds,
         num_token_bounds, hist(&EngineTotals::request_generation_tokens));
  return w.Take();
}

namespace {

void WriteEngineSeries(Writer& w, const std::vector<protocol::EngineStats>& per_rank,
                       const std::vector<bool>& alive, const std::vector<size_t>& shown) {
  using S = protocol::EngineStats;
  auto per_engine = [&](auto value_of) {
    Writer::Series series;
    for (size_t r : shown) {
      series.emplace_back(EngineLabel(r), static_cast<double>(value_of(per_rank[r], r)));
    }
    return series;
  };
  w.Family("num_requests_running", "gauge", "Number of requests in model execution batches.",
           per_engine([](const S& s, size_t) { return s.num_running; }));
  w.Family("num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
           per_engine([](const S& s, size_t) { return s.num_waiting; }));
  w.Family("kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
           per_engine([](const S& s, size_t) { return s.kv_cache_usage; }));
  w.Family("num_gpu_blocks", "gauge", "Number of KV-cache blocks in the pool.",
           per_engine([](const S& s, size_t) { return s.num_gpu_blocks; }));
  Writer::Series cache_info;
  for (size_t r : shown) {
    cache_info.emplace_back(
        fmt::format("{},block_size=\"{}\",num_gpu_blocks=\"{}\"", EngineLabel(r),
                    per_rank[r].block_size, per_rank[r].num_gpu_blocks),
        1.0);
  }
  w.Family("cache_config_info", "gauge", "Information of the KV-cache config.", cache_info);
  w.Family("num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
           per_engine([](const S& s, size_t) { return s.num_preemptions; }));
  w.Family("prefix_cache_queries_total", "counter",
           "Prefix cache queries, in terms of number of queried tokens.",
           per_engine([](const S& s, size_t) { return s.prefix_cache_queries; }));
  w.Family("prefix_cache_hits_total", "counter",
           "Prefix cache hits, in terms of number of cached tokens.",
           per_engine([](const S& s, size_t) { return s.prefix_cache_hits; }));
  Writer::HistSeries iteration_tokens;
  for (size_t r : shown) {
    iteration_tokens.emplace_back(EngineLabel(r), IterationTokens(per_rank[r]));
  }
  w.Hist("iteration_tokens_total", "Histogram of number of tokens per engine_step.",
         IterationTokensBounds(), iteration_tokens);
  w.Family("engine_alive", "gauge", "1 while the DP rank serves, 0 once it is lost.",
           per_engine([&](const S&, size_t r) { return r < alive.size() && alive[r] ? 1 : 0; }));
  w.Family("engine_requests_finished_total", "counter",
           "Requests the DP rank finished (any reason), as counted by the engine.",
           per_engine([](const S& s, size_t) { return s.num_requests_finished; }));
  w.Family("engine_generation_tokens_total", "counter",
           "Tokens the DP rank generated, as counted by the engine.",
           per_engine([](const S& s, size_t) { return s.num_generation_tokens; }));
  // Hybrid models (Qwen3.5): the state-slot cache group next to the KV blocks.
  bool has_state = false;
  for (const S& s : per_rank) has_state |= s.num_state_slots > 0;
  if (has_state) {
    w.Family("state_slots_used", "gauge",
             "Recurrent-state slots (linear-attention layers) held by running requests.",
             per_engine([](const S& s, size_t) { return s.num_state_slots_used; }));
    w.Family("state_slots_total", "gauge",
             "Recurrent-state slots reserved at start (--max-num-seqs), one per running "
             "request.",
             per_engine([](const S& s, size_t) { return s.num_state_slots; }));
  }
  w.Family("engine_waves_total", "counter",
           "DP waves the rank stepped in (expert-parallel MoE: ranks step together).",
           per_engine([](const S& s, size_t) { return s.num_waves; }));
  w.Family("engine_dummy_steps_total", "counter",
           "Steps the rank ran with nothing scheduled, only to enter the other ranks' "
           "expert-parallel collectives.",
           per_engine([](const S& s, size_t) { return s.num_dummy_steps; }));
  // vLLM shows these only when speculative decoding is on (engines then report per-position
  // counters).
  bool speculating = false;
  for (const S& s : per_rank) speculating |= !s.spec_num_accepted_per_pos.empty();
  if (!speculating) return;
  w.Family("spec_decode_num_drafts_total", "counter",
           "Number of spec decoding drafts (a request verifying drafts in a step).",
           per_engine([](const S& s, size_t) { return s.spec_num_drafts; }));
  w.Family("spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.",
           per_engine([](const S& s, size_t) { return s.spec_num_draft_tokens; }));
  w.Family("spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.",
           per_engine([](const S& s, size_t) { return s.spec_num_accepted_tokens; }));
  Writer::Series per_pos;
  for (size_t r : shown) {
    for (size_t p = 0; p < per_rank[r].spec_num_accepted_per_pos.size(); ++p) {
      per_pos.emplace_back(fmt::format("{},position=\"{}\"", EngineLabel(r), p),
                           static_cast<double>(per_rank[r].spec_num_accepted_per_pos[p]));
    }
  }
  w.Family("spec_decode_num_accepted_tokens_per_pos_total", "counter",
           "Accepted tokens per draft position.", per_pos);
}

}  // namespace

}  // namespace tandem::server
