// `tandem serve MODEL [flags]`: the API server in this process, the engine core in a child.
#pragma once

namespace tandem::apps {

// Parses serve flags from argv (argv[0] = "serve"), starts the engine core process and the
// HTTP server, and blocks until SIGINT/SIGTERM or the engine dies. Returns the exit code.
int RunServeCommand(int argc, char** argv);

}  // namespace tandem::apps
