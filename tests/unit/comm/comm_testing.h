// Test helpers for comm/: per-collective checks against a naive reference (each returns "" on
// success, else what differed), and runners that put a group's ranks on threads ("local") or on
// forked processes ("shm", "gloo") with a hard deadline.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "comm/process_group.h"

namespace tandem::comm::testing {

// The sizes every collective is checked at (elements).
inline const std::vector<size_t> kCounts = {1, 7, 4096, size_t{1} << 20};

// One rank's part of a test: returns "" when everything matched, else a message.
using RankFn = std::function<std::string(ProcessGroup& pg)>;

std::string CheckAllReduceSum(ProcessGroup& pg, size_t count);
std::string CheckAllReduceSumBf16(ProcessGroup& pg, size_t count);
std::string CheckAllGather(ProcessGroup& pg, size_t count);
std::string CheckReduceScatterSum(ProcessGroup& pg, size_t count);
std::string CheckAllToAll(ProcessGroup& pg, size_t max_count);
std::string CheckBroadcast(ProcessGroup& pg, size_t count);
std::string CheckBarrier(ProcessGroup& pg);

// Runs `fn` on every rank of a group of `size` ranks built from `base` (rank filled in), each
// rank on its own thread (backend "local") or forked process (others). Returns "" when every
// rank succeeded, else "rank r: message" lines; a rank still running after `deadline_s` is
// killed and reported (a thread cannot be killed: the test fails naming it and its process
// exits, common/rank_threads.h).
std::string RunGroup(const GroupSpec& base, int size, const RankFn& fn, double deadline_s = 120);

// A free TCP port on 127.0.0.1 (for gloo rendezvous), e.g. "127.0.0.1:40123".
std::string FreeLoopbackAddress();

// A group name unique to this process and call.
std::string UniqueGroupName(const std::string& prefix);

}  // namespace tandem::comm::testing
