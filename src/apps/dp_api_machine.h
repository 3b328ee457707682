// An API machine of hybrid / external DP load balancing (docs/design/dp-load-balancing-
// modes.md): a machine with DP ranks S … S+L-1 (S > 0) that serves them through its own API
// servers. It asks the head (--data-parallel-address:--data-parallel-rpc-port) where the
// coordinator publishes, starts its API servers on that feed, and starts its engine cores,
// which join the head's handshake like --headless ones but answer this machine's API servers.
#pragma once

#include <string>
#include <vector>

#include "apps/engine_core_config.h"
#include "apps/serve_flags.h"

namespace tandem::apps {

// Runs until SIGTERM/SIGINT or until every local rank is lost. Returns the exit code: 0 after
// a signal, 1 when start-up fails (the head refused or never answered, an engine died while
// loading) or every local rank was lost.
int RunDataParallelApiMachine(const ServeFlags& flags, const EngineCoreConfig& base,
                              const std::vector<std::string>& serve_args);

}  // namespace tandem::apps
