#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/check.h"

namespace tandem::server {
namespace {

// vLLM's buckets (v1/metrics/loggers.py).
std::vector<double> TtftBuckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> ItlBuckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> E2eBuckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}

const char* kPrefixes[] = {"tandem:", "vllm:"};

// Writes one metric family under both prefixes.
class Writer {
 public:
  explicit Writer(const std::string& model_name) : labels_(fmt::format("model_name=\"{}\"", model_name)) {}

  void Scalar(const char* name, const char* type, const char* help, double value,
              const std::string& extra_labels = "") {
    for (const char* prefix : kPrefixes) {
      Header(prefix, name, type, help);
      out_ += fmt::format("{}{}{{{}{}}} {}\n", prefix, name, labels_, extra_labels, Num(value));
    }
  }

  void Labelled(const char* name, const char* type, const char* help,
                const std::vector<std::pair<std::string, double>>& series) {
    for (const char* prefix : kPrefixes) {
      Header(prefix, name, type, help);
      for (const auto& [extra, value] : series) {
        out_ += fmt::format("{}{}{{{}{}}} {}\n", prefix, name, labels_, extra, Num(value));
      }
    }
  }

  void Hist(const char* name, const char* help, const std::vector<double>& upper_bounds,
            const HistogramTotals& h) {
    for (const char* prefix : kPrefixes) {
      Header(prefix, name, "histogram", help);
      uint64_t cumulative = 0;
      for (size_t i = 0; i < upper_bounds.size(); ++i) {
        cumulative += h.bucket_counts[i];
        out_ += fmt::format("{}{}_bucket{{{},le=\"{}\"}} {}\n", prefix, name, labels_,
                            Num(upper_bounds[i]), cumulative);
      }
      out_ += fmt::format("{}{}_bucket{{{},le=\"+Inf\"}} {}\n", prefix, name, labels_, h.count);
      out_ += fmt::format("{}{}_count{{{}}} {}\n", prefix, name, labels_, h.count);
      out_ += fmt::format("{}{}_sum{{{}}} {}\n", prefix, name, labels_, Num(h.sum));
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  static std::string Num(double v) { return fmt::format("{}", v); }
  void Header(const char* prefix, const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {}{} {}\n# TYPE {}{} {}\n", prefix, name, help, prefix, name, type);
  }
  std::string labels_;
  std::string out_;
};

}  // namespace

namespace {

void Observe(HistogramTotals& h, const std::vector<double>& upper_bounds, double value) {
  const auto it = std::lower_bound(upper_bounds.begin(), upper_bounds.end(), value);
  ++h.bucket_counts[it - upper_bounds.begin()];  // last slot: above every bound (+Inf only)
  ++h.count;
  h.sum += value;
}

const std::vector<double>& TtftBounds() { static const auto b = TtftBuckets(); return b; }
const std::vector<double>& ItlBounds() { static const auto b = ItlBuckets(); return b; }
const std::vector<double>& E2eBounds() { static const auto b = E2eBuckets(); return b; }

}  // namespace

Metrics& Metrics::Global() {
  static Metrics* metrics = new Metrics();  // never destroyed: used until process exit
  return *metrics;
}

Metrics::Metrics() {
  for (const auto* bounds : {&TtftBounds(), &ItlBounds(), &E2eBounds()}) {
    TANDEM_CHECK(bounds->size() < static_cast<size_t>(kMaxHistogramBuckets))
        << "a histogram has more bounds than HistogramTotals has slots (+Inf needs one)";
  }
}

void Metrics::AddPromptTokens(int64_t n) {
  std::lock_guard l(mutex_);
  totals_.prompt_tokens += n;
  PublishLocked();
}
void Metrics::AddGenerationTokens(int64_t n) {
  std::lock_guard l(mutex_);
  totals_.generation_tokens += n;
  PublishLocked();
}
void Metrics::AddRequestSuccess(const std::string& reason) {
  std::lock_guard l(mutex_);
  for (int i = 0; i < kNumFinishReasons; ++i) {
    if (reason == kFinishReasons[i]) ++totals_.request_success[i];
  }
  PublishLocked();
}
void Metrics::ObserveTimeToFirstToken(double s) {
  std::lock_guard l(mutex_);
  Observe(totals_.ttft, TtftBounds(), s);
  PublishLocked();
}
void Metrics::ObserveInterTokenLatency(double s) {
  std::lock_guard l(mutex_);
  Observe(totals_.itl, ItlBounds(), s);
  PublishLocked();
}
void Metrics::ObserveE2eRequestLatency(double s) {
  std::lock_guard l(mutex_);
  Observe(totals_.e2e, E2eBounds(), s);
  PublishLocked();
}

void Metrics::Reset() {
  std::lock_guard l(mutex_);
  totals_ = MetricsTotals{};
  PublishLocked();
}

void Metrics::ShareVia(std::unique_ptr<MetricsShare> share, int slot) {
  std::lock_guard l(mutex_);
  share_ = std::move(share);
  slot_ = slot;
  PublishLocked();
}

void Metrics::PublishLocked() {
  if (share_) share_->Store(slot_, totals_);
}

std::string Metrics::Render(const std::string& model_name, const protocol::EngineStats& stats) const {
  return Render(model_name, std::vector<protocol::EngineStats>{stats}, std::vector<bool>{true});
}

std::string Metrics::Render(const std::string& model_name,
                            const std::vector<protocol::EngineStats>& per_rank,
                            const std::vector<bool>& alive) const {
  MetricsTotals totals;
  {
    std::lock_guard l(mutex_);
    totals = totals_;
    if (share_) totals.Add(share_->SumOfOthers(slot_));
  }
  Writer w(model_name);
  // One series per DP rank: engine="N".
  auto per_engine = [&](auto value_of) {
    std::vector<std::pair<std::string, double>> series;
    for (size_t r = 0; r < per_rank.size(); ++r) {
      series.emplace_back(fmt::format(",engine=\"{}\"", r), static_cast<double>(value_of(per_rank[r], r)));
    }
    return series;
  };
  using S = protocol::EngineStats;
  w.Labelled("num_requests_running", "gauge", "Number of requests in model execution batches.",
             per_engine([](const S& s, size_t) { return s.num_running; }));
  w.Labelled("num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
             per_engine([](const S& s, size_t) { return s.num_waiting; }));
  w.Labelled("kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
             per_engine([](const S& s, size_t) { return s.kv_cache_usage; }));
  w.Labelled("num_gpu_blocks", "gauge", "Number of KV-cache blocks in the pool.",
             per_engine([](const S& s, size_t) { return s.num_gpu_blocks; }));
  std::vector<std::pair<std::string, double>> cache_info;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    cache_info.emplace_back(fmt::format(",engine=\"{}\",block_size=\"{}\",num_gpu_blocks=\"{}\"", r,
                                        per_rank[r].block_size, per_rank[r].num_gpu_blocks),
                            1.0);
  }
  w.Labelled("cache_config_info", "gauge", "Information of the KV-cache config.", cache_info);
  w.Labelled("num_preemptions_total", "counter", "Cumulative number of preemptions.",
             per_engine([](const S& s, size_t) { return s.num_preemptions; }));
  w.Labelled("engine_alive", "gauge", "1 while the DP rank serves, 0 once it is lost.",
             per_engine([&](const S&, size_t r) { return r < alive.size() && alive[r] ? 1 : 0; }));
  w.Labelled("engine_requests_finished_total", "counter",
             "Requests the DP rank finished (any reason), as counted by the engine.",
             per_engine([](const S& s, size_t) { return s.num_requests_finished; }));
  w.Labelled("engine_generation_tokens_total", "counter",
             "Tokens the DP rank generated, as counted by the engine.",
             per_engine([](const S& s, size_t) { return s.num_generation_tokens; }));
  // Hybrid models (Qwen3.5): the state-slot cache group next to the KV blocks.
  bool has_state = false;
  for (const S& s : per_rank) has_state |= s.num_state_slots > 0;
  if (has_state) {
    w.Labelled("state_slots_used", "gauge",
               "Recurrent-state slots (linear-attention layers) held by running requests.",
               per_engine([](const S& s, size_t) { return s.num_state_slots_used; }));
    w.Labelled("state_slots_total", "gauge",
               "Recurrent-state slots reserved at start (--max-num-seqs), one per running "
               "request.",
               per_engine([](const S& s, size_t) { return s.num_state_slots; }));
  }
  w.Labelled("engine_waves_total", "counter",
             "DP waves the rank stepped in (expert-parallel MoE: ranks step together).",
             per_engine([](const S& s, size_t) { return s.num_waves; }));
  w.Labelled("engine_dummy_steps_total", "counter",
             "Steps the rank ran with nothing scheduled, only to enter the other ranks' "
             "expert-parallel collectives.",
             per_engine([](const S& s, size_t) { return s.num_dummy_steps; }));
  // vLLM shows these only when speculative decoding is on (engines then report per-position
  // counters).
  bool speculating = false;
  for (const S& s : per_rank) speculating |= !s.spec_num_accepted_per_pos.empty();
  if (speculating) {
    w.Labelled("spec_decode_num_drafts_total", "counter",
               "Number of spec decoding drafts (a request verifying drafts in a step).",
               per_engine([](const S& s, size_t) { return s.spec_num_drafts; }));
    w.Labelled("spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.",
               per_engine([](const S& s, size_t) { return s.spec_num_draft_tokens; }));
    w.Labelled("spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.",
               per_engine([](const S& s, size_t) { return s.spec_num_accepted_tokens; }));
    std::vector<std::pair<std::string, double>> per_pos;
    for (size_t r = 0; r < per_rank.size(); ++r) {
      for (size_t p = 0; p < per_rank[r].spec_num_accepted_per_pos.size(); ++p) {
        per_pos.emplace_back(fmt::format(",engine=\"{}\",position=\"{}\"", r, p),
                             static_cast<double>(per_rank[r].spec_num_accepted_per_pos[p]));
      }
    }
    w.Labelled("spec_decode_num_accepted_tokens_per_pos_total", "counter",
               "Accepted tokens per draft position.", per_pos);
  }
  w.Scalar("prompt_tokens_total", "counter", "Number of prefill tokens processed.",
           static_cast<double>(totals.prompt_tokens));
  w.Scalar("generation_tokens_total", "counter", "Number of generation tokens processed.",
           static_cast<double>(totals.generation_tokens));
  std::vector<std::pair<std::string, double>> success;
  for (int i = 0; i < kNumFinishReasons; ++i) {
    success.emplace_back(fmt::format(",finished_reason=\"{}\"", kFinishReasons[i]),
                         static_cast<double>(totals.request_success[i]));
  }
  w.Labelled("request_success_total", "counter", "Count of finished requests by finish reason.",
             success);
  w.Hist("time_to_first_token_seconds", "Histogram of time to first token in seconds.",
         TtftBounds(), totals.ttft);
  w.Hist("inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
         ItlBounds(), totals.itl);
  w.Hist("time_per_output_token_seconds", "Histogram of time per output token in seconds.",
         ItlBounds(), totals.itl);
  w.Hist("e2e_request_latency_seconds", "Histogram of end-to-end request latency in seconds.",
         E2eBounds(), totals.e2e);
  return w.Take();
}

}  // namespace tandem::server
