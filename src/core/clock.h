// Monotonic and wall clocks in the units the metrics use.
#pragma once

#include <chrono>
#include <cstdint>

namespace tandem {

// Seconds on a monotonic clock (for TTFT, ITL, end-to-end latency).
inline double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Unix time in whole seconds (OpenAI `created` fields).
inline int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tandem
