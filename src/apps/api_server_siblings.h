// The API servers beside API server 0 on one machine (--api-server-count K > 1): the shared
// metrics table they sum into, and the K-1 `_api-server` children. Used by the head and by an
// API machine of hybrid / external DP load balancing alike.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "apps/engine_launcher.h"
#include "apps/serve_flags.h"

namespace tandem::apps {

// With K > 1: creates the metrics table (named by this process's pid) that API servers 1..K-1
// open, so that /metrics sums all K; removes its name when destroyed. A table that cannot be
// created is a warning: each API server then shows its own request counters.
class ScopedMetricsShare {
 public:
  explicit ScopedMetricsShare(const ServeFlags& flags);
  ~ScopedMetricsShare();
  ScopedMetricsShare(const ScopedMetricsShare&) = delete;
  ScopedMetricsShare& operator=(const ScopedMetricsShare&) = delete;

 private:
  bool active_ = false;
};

// Spawns API servers 1..K-1 (`tandem _api-server I OUTPUT_ENDPOINTS[I] PUBLISH_ENDPOINT
// SERVE_ARGS...`) into `children`; an exit while !stopping is logged as an error.
void SpawnSiblingApiServers(const ServeFlags& flags,
                            const std::vector<std::string>& output_endpoints,
                            const std::string& publish_endpoint,
                            const std::vector<std::string>& serve_args,
                            const std::atomic<bool>& stopping,
                            std::vector<std::unique_ptr<ChildProcess>>* children);

}  // namespace tandem::apps
