// `tandem manager`: the cluster manager (cluster/manager, MANAGER.md, docs/manager.md).
#pragma once

namespace tandem::apps {

// argv[0] = "manager". Serves until SIGINT/SIGTERM. Returns 0, 1 on a start-up error (the
// reason on stderr), 2 for bad flags.
int RunManagerCommand(int argc, char** argv);

}  // namespace tandem::apps
