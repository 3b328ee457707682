// `tandem bench <serve|kernels> [flags]`: entry point called by the tandem main.
#pragma once

namespace tandem::apps {

// argv[0] is "bench", argv[1] the benchmark ("serve" or "kernels"), the rest its flags
// (vLLM spellings: `--a-b v`, `--a-b=v` and `--a_b` are all accepted). Prints --help on request.
// Returns the process exit code: 0 on success (failed benchmark requests are reported, not
// fatal), 1 when the run could not be done (its error is printed to stderr), CLI11's code for
// bad flags.
int RunBenchCommand(int argc, char** argv);

}  // namespace tandem::apps

// main.cpp calls it unqualified from the global namespace.
using tandem::apps::RunBenchCommand;
