#include "apps/api_server_siblings.h"

#include <unistd.h>

#include <utility>

#include "core/logging.h"
#include "server/metrics.h"
#include "server/metrics_share.h"

namespace tandem::apps {

ScopedMetricsShare::ScopedMetricsShare(const ServeFlags& flags) {
  if (flags.api_server_count <= 1) return;
  auto share = server::MetricsShare::Create(server::MetricsShareName(getpid()),
                                            flags.api_server_count, flags.data_parallel_size);
  if (!share.ok()) {
    TLOG_WARN("{}; /metrics will show each API server's own request counters",
              share.status().message());
    return;
  }
  server::Metrics::Global().ShareVia(std::move(share).value(), /*slot=*/0);
  active_ = true;
}

ScopedMetricsShare::~ScopedMetricsShare() {
  if (active_) server::Metrics::Global().ShareVia(nullptr, 0);
}

void SpawnSiblingApiServers(const ServeFlags& flags,
                            const std::vector<std::string>& output_endpoints,
                            const std::string& publish_endpoint,
                            const std::vector<std::string>& serve_args,
                            const std::atomic<bool>& stopping,
                            std::vector<std::unique_ptr<ChildProcess>>* children) {
  for (int i = 1; i < flags.api_server_count; ++i) {
    std::vector<std::string> args = {"_api-server", std::to_string(i), output_endpoints[i],
                                     publish_endpoint};
    args.insert(args.end(), serve_args.begin(), serve_args.end());
    children->push_back(std::make_unique<ChildProcess>());
    Status st = children->back()->Spawn(args, [&stopping, i](const std::string& what) {
      if (!stopping) TLOG_ERROR("API server {}: {}", i, what);
    });
    if (!st.ok()) TLOG_ERROR("{}", st.message());
  }
}

}  // namespace tandem::apps
