// `tandem bench comm`: see comm_bench.h. Each size: a few warm-up calls, a calibration run to
// pick the iteration count that fills seconds_per_size, then the timed loop between barriers;
// rank 0's wall time per call is the latency.
#include "apps/bench/comm_bench.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "comm/process_group.h"
#include "core/clock.h"

namespace tandem::apps::bench {
namespace {

struct Row {
  size_t bytes;
  double latency_us;
};

std::string FreeLoopbackAddress() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

// One rank's sweep; rank 0 writes its rows to `out_fd`. Returns the process exit code.
int RunRank(const comm::GroupSpec& spec, const CommBenchConfig& config, int out_fd) {
  auto pg_or = comm::CreateProcessGroup(spec);
  if (!pg_or.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", spec.rank, pg_or.status().ToString().c_str());
    return 1;
  }
  comm::ProcessGroup& pg = **pg_or;
  std::vector<float> data(config.max_bytes / sizeof(float), 1.0f);
  for (size_t bytes = config.min_bytes; bytes <= config.max_bytes; bytes *= 4) {
    size_t count = bytes / sizeof(float);
    auto run = [&](int iters) -> Result<double> {
      TANDEM_RETURN_IF_ERROR(pg.Barrier());
      double start = MonotonicSeconds();
      for (int i = 0; i < iters; ++i) TANDEM_RETURN_IF_ERROR(pg.AllReduceSum(data.data(), count));
      double elapsed = MonotonicSeconds() - start;
      // Every rank uses rank 0's estimate, so all run the same number of iterations.
      float shared = static_cast<float>(elapsed);
      TANDEM_RETURN_IF_ERROR(pg.Broadcast(&shared, 1, 0));
      return static_cast<double>(shared);
    };
    auto calib = run(5);
    if (!calib.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", spec.rank, calib.status().ToString().c_str());
      return 1;
    }
    int iters = static_cast<int>(std::clamp(config.seconds_per_size / (*calib / 5), 5.0, 20000.0));
    auto timed = run(iters);
    if (!timed.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", spec.rank, timed.status().ToString().c_str());
      return 1;
    }
    if (spec.rank == 0) {
      Row row{bytes, *timed / iters * 1e6};
      (void)!write(out_fd, &row, sizeof(row));
    }
  }
  return 0;
}

Result<std::vector<Row>> RunBackend(const std::string& backend, const CommBenchConfig& config) {
  comm::GroupSpec spec;
  spec.backend = backend;
  spec.name = "bench-comm-" + std::to_string(getpid()) + "-" + backend;
  spec.size = config.ranks;
  spec.timeout_s = config.timeout_s;
  spec.rendezvous = FreeLoopbackAddress();
  int fds[2];
  if (pipe(fds) != 0) return Internal("pipe failed");
  std::vector<pid_t> pids;
  for (int r = 0; r < config.ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      spec.rank = r;
      _exit(RunRank(spec, config, fds[1]));
    }
    pids.push_back(pid);
  }
  close(fds[1]);
  std::vector<Row> rows;
  Row row;
  while (read(fds[0], &row, sizeof(row)) == static_cast<ssize_t>(sizeof(row))) rows.push_back(row);
  close(fds[0]);
  bool failed = false;
  for (pid_t pid : pids) {
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    failed |= !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0;
  }
  if (failed) return Unavailable("backend " + backend + ": a rank failed (see its message above)");
  return rows;
}

std::string HumanBytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

Status CommBenchConfig::Validate() const {
  if (ranks < 2 || ranks > 64)
    return InvalidArgument("--ranks must be in 2..64, got " + std::to_string(ranks));
  if (min_bytes < 4 || min_bytes % 4 != 0 || max_bytes < min_bytes) {
    return InvalidArgument("--min-bytes must be a multiple of 4 and at most --max-bytes");
  }
  for (const auto& b : backends) {
    if (b != "shm" && b != "gloo")
      return InvalidArgument("--backends: unknown backend '" + b + "' (shm, gloo)");
  }
  return Status::Ok();
}

Status RunCommBench(const CommBenchConfig& config) {
  TANDEM_RETURN_IF_ERROR(config.Validate());
  std::printf("all-reduce f32 sum, %d ranks (processes on this machine)\n", config.ranks);
  std::printf("%-8s %10s %14s %14s %14s\n", "backend", "size", "latency_us", "algbw_GB/s",
              "busbw_GB/s");
  for (const std::string& backend : config.backends) {
    auto rows = RunBackend(backend, config);
    if (!rows.ok()) return rows.status();
    for (const Row& row : *rows) {
      double algbw = row.bytes / (row.latency_us * 1e-6) / 1e9;
      double busbw = algbw * 2.0 * (config.ranks - 1) / config.ranks;
      std::printf("%-8s %10s %14.2f %14.3f %14.3f\n", backend.c_str(),
                  HumanBytes(row.bytes).c_str(), row.latency_us, algbw, busbw);
    }
    std::fflush(stdout);
  }
  return Status::Ok();
}

}  // namespace tandem::apps::bench
