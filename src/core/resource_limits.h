// Process resource limits set at start-up.
#pragma once

#include <cstdint>

namespace tandem {

// Raises the soft limit on open file descriptors (RLIMIT_NOFILE) to the hard limit, as servers
// that hold one socket per client do (nginx's worker_rlimit_nofile, uvicorn users' `ulimit -n`):
// Debian's default soft limit of 1024 would refuse the 1,021st concurrent connection. Returns
// the soft limit in force afterwards (unchanged when raising fails); never fails.
int64_t RaiseOpenFileLimit();

}  // namespace tandem
