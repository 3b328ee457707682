// Process resource limits set at start-up, and the machine's memory they are checked against.
#pragma once

#include <cstdint>

namespace tandem {

// Raises the soft limit on open file descriptors (RLIMIT_NOFILE) to the hard limit, as servers
// that hold one socket per client do (nginx's worker_rlimit_nofile, uvicorn users' `ulimit -n`):
// Debian's default soft limit of 1024 would refuse the 1,021st concurrent connection. Returns
// the soft limit in force afterwards (unchanged when raising fails); never fails.
int64_t RaiseOpenFileLimit();

// This machine's physical memory in bytes (sysconf: _SC_PHYS_PAGES × _SC_PAGE_SIZE, the
// MemTotal of /proc/meminfo); 0 when the system does not say. Thread: any.
int64_t PhysicalMemoryBytes();

}  // namespace tandem
