// `tandem agent`: runs a machine's model instances for `tandem manager` (cluster/agent).
#pragma once

namespace tandem::apps {

// argv[0] = "agent". Runs until SIGINT/SIGTERM (stopping its instances). Returns 0, 1 on a
// start-up error (the reason on stderr), 2 for bad flags.
int RunAgentCommand(int argc, char** argv);

}  // namespace tandem::apps
