#include "core/step_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "core/clock.h"
#include "core/logging.h"

namespace tandem::core {
namespace {

struct Window {
  std::array<double, static_cast<size_t>(StepPhase::kCount)> phase_s{};
  double step_s = 0;
  int64_t steps = 0, tokens = 0, seqs = 0;
};

std::mutex g_mu;
Window g_window;              // guarded by g_mu
thread_local int t_open = 0;  // phase scopes open on this thread

std::string Describe(const Window& w) {
  if (w.steps == 0) {
    return "profile: no steps";
  }
  const double per_step_ms = 1e3 * w.step_s / static_cast<double>(w.steps);
  std::string line = fmt::format(
      "profile: {} steps, {:.1f} tokens and {:.1f} sequences a step; {:.2f} ms a step =", w.steps,
      static_cast<double>(w.tokens) / static_cast<double>(w.steps),
      static_cast<double>(w.seqs) / static_cast<double>(w.steps), per_step_ms);
  double counted = 0;
  for (size_t p = 0; p < w.phase_s.size(); ++p) {
    counted += w.phase_s[p];
    const double ms = 1e3 * w.phase_s[p] / static_cast<double>(w.steps);
    line += fmt::format(" {} {:.2f} ({:.0f}%)", StepPhaseName(static_cast<StepPhase>(p)), ms,
                        w.step_s > 0 ? 100.0 * w.phase_s[p] / w.step_s : 0.0);
  }
  const double other = std::max(0.0, w.step_s - counted);
  line += fmt::format(" other {:.2f} ({:.0f}%)", 1e3 * other / static_cast<double>(w.steps),
                      w.step_s > 0 ? 100.0 * other / w.step_s : 0.0);
  return line;
}

}  // namespace

std::atomic<int32_t> StepProfile::every_steps_{0};

const char* StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kMatmul:
      return "matmul";
    case StepPhase::kAttention:
      return "attention";
    case StepPhase::kNormAct:
      return "norm/act";
    case StepPhase::kRouting:
      return "routing";
    case StepPhase::kCollective:
      return "collectives";
    case StepPhase::kSampling:
      return "sampling";
    case StepPhase::kDrafting:
      return "drafting";
    case StepPhase::kCount:
      break;
  }
  return "?";
}

void StepProfile::Enable(int32_t every_steps) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_window = Window{};
  every_steps_.store(every_steps > 0 ? every_steps : 0, std::memory_order_relaxed);
}

void StepProfile::Add(StepPhase phase, double seconds) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_window.phase_s[static_cast<size_t>(phase)] += seconds;
}

void StepProfile::EndStep(double seconds, int64_t num_tokens, int64_t num_seqs) {
  const int32_t every = every_steps_.load(std::memory_order_relaxed);
  if (every <= 0) {
    return;
  }
  std::string line;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_window.step_s += seconds;
    ++g_window.steps;
    g_window.tokens += num_tokens;
    g_window.seqs += num_seqs;
    if (g_window.steps < every) {
      return;
    }
    line = Describe(g_window);
    g_window = Window{};
  }
  TLOG_INFO("{}", line);
}

std::string StepProfile::Summary() {
  std::lock_guard<std::mutex> lock(g_mu);
  return Describe(g_window);
}

ScopedPhase::ScopedPhase(StepPhase phase) : phase_(phase) {
  if (!StepProfile::enabled()) {
    return;
  }
  entered_ = true;
  if (t_open++ == 0) {
    start_ = MonotonicSeconds();
  }
}

ScopedPhase::~ScopedPhase() {
  if (!entered_) {
    return;
  }
  --t_open;
  if (start_ >= 0) {
    StepProfile::Add(phase_, MonotonicSeconds() - start_);
  }
}

}  // namespace tandem::core
