#include "cluster/manager/gateway_timeline.h"

#include <algorithm>
#include <cmath>

namespace tandem::cluster::manager {

using nlohmann::json;

void GatewayTimeline::Record(double now_unix, const std::string& model, int64_t output_tokens,
                             double first_byte_s) {
  const int64_t index = static_cast<int64_t>(std::floor(now_unix / kStepSeconds));
  std::lock_guard lock(mutex_);
  if (steps_.empty() || steps_.back().index < index) {
    steps_.push_back(Step{});
    steps_.back().index = index;
  }
  while (!steps_.empty() && steps_.front().index <= index - kSteps) steps_.pop_front();
  // A clock step back lands in the newest step.
  Step& step = steps_.back();
  step.requests += 1;
  step.output_tokens += std::max<int64_t>(0, output_tokens);
  if (first_byte_s >= 0 && step.ttft_ms.size() < kMaxSamplesPerStep) {
    step.ttft_ms.push_back(first_byte_s * 1000);
  }
  auto& [requests, tokens] = step.by_model[model];
  requests += 1;
  tokens += std::max<int64_t>(0, output_tokens);
}

namespace {

json Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return nullptr;
  std::sort(samples.begin(), samples.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
  return samples[std::clamp<size_t>(rank, 1, samples.size()) - 1];
}

}  // namespace

json GatewayTimeline::Snapshot(double now_unix) const {
  const int64_t last = static_cast<int64_t>(std::floor(now_unix / kStepSeconds));
  std::lock_guard lock(mutex_);
  json points = json::array();
  std::map<std::string, std::pair<int64_t, int64_t>> totals;
  auto it = steps_.begin();
  for (int64_t index = last - kSteps + 1; index <= last; ++index) {
    while (it != steps_.end() && it->index < index) ++it;
    const Step* step = it != steps_.end() && it->index == index ? &*it : nullptr;
    json point = {
        {"time", index * kStepSeconds},
        {"requests_per_s", step ? static_cast<double>(step->requests) / kStepSeconds : 0.0},
        {"output_tokens_per_s",
         step ? static_cast<double>(step->output_tokens) / kStepSeconds : 0.0},
        {"ttft_p50_ms", step ? Percentile(step->ttft_ms, 0.5) : json(nullptr)},
        {"ttft_p95_ms", step ? Percentile(step->ttft_ms, 0.95) : json(nullptr)}};
    points.push_back(std::move(point));
    if (step) {
      for (const auto& [model, counts] : step->by_model) {
        totals[model].first += counts.first;
        totals[model].second += counts.second;
      }
    }
  }
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> busiest(totals.begin(),
                                                                           totals.end());
  std::stable_sort(busiest.begin(), busiest.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  if (busiest.size() > 10) busiest.resize(10);
  json top = json::array();
  for (const auto& [model, counts] : busiest) {
    top.push_back(
        {{"model_name", model}, {"requests", counts.first}, {"output_tokens", counts.second}});
  }
  return {{"step_s", kStepSeconds}, {"points", std::move(points)}, {"busiest", std::move(top)}};
}

}  // namespace tandem::cluster::manager
