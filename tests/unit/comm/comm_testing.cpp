#include "comm_testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "comm/bf16.h"
#include "common/rank_threads.h"
#include "tensor/dtype.h"

namespace tandem::comm::testing {
namespace {

// Small integers, so f32 sums are exact in any order.
float IntValue(int rank, size_t i, int salt) {
  return static_cast<float>(static_cast<int>((rank * 131 + i * 7 + salt * 31) % 97) - 48);
}

// Values with a full mantissa, for the bf16 test.
float RealValue(int rank, size_t i) {
  return std::sin(0.37f * static_cast<float>(i) + 1.3f * static_cast<float>(rank)) * 3.0f;
}

std::string Mismatch(const char* op, size_t count, size_t i, double got, double want) {
  return std::string(op) + " count=" + std::to_string(count) + ": element " + std::to_string(i) +
         " is " + std::to_string(got) + ", expected " + std::to_string(want);
}

std::string StatusText(const char* op, size_t count, const Status& st) {
  return std::string(op) + " count=" + std::to_string(count) + " failed: " + st.ToString();
}

}  // namespace

std::string CheckAllReduceSum(ProcessGroup& pg, size_t count) {
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = IntValue(pg.rank(), i, 1);
  Status st = pg.AllReduceSum(data.data(), count);
  if (!st.ok()) return StatusText("AllReduceSum", count, st);
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < pg.size(); ++r) want += IntValue(r, i, 1);
    if (data[i] != want) return Mismatch("AllReduceSum", count, i, data[i], want);
  }
  return "";
}

std::string CheckAllReduceSumBf16(ProcessGroup& pg, size_t count) {
  std::vector<uint16_t> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = FloatToBFloat16(RealValue(pg.rank(), i));
  Status st = pg.AllReduceSumBf16(data.data(), count);
  if (!st.ok()) return StatusText("AllReduceSumBf16", count, st);
  for (size_t i = 0; i < count; ++i) {
    float want = 0, abs_sum = 0;
    for (int r = 0; r < pg.size(); ++r) {
      float x = tensor::BFloat16ToFloat(FloatToBFloat16(RealValue(r, i)));
      want += x;
      abs_sum += std::fabs(x);
    }
    // One bf16 rounding of the result (8 significant bits): half an ulp of |sum| ≤ 2^-8·|sum|,
    // plus f32 summation-order differences (negligible next to it).
    float got = tensor::BFloat16ToFloat(data[i]);
    float tol = std::ldexp(abs_sum, -8) + 1e-6f;
    if (std::fabs(got - want) > tol) return Mismatch("AllReduceSumBf16", count, i, got, want);
  }
  return "";
}

std::string CheckAllGather(ProcessGroup& pg, size_t count) {
  std::vector<float> in(count), out(count * pg.size(), -1e9f);
  for (size_t i = 0; i < count; ++i) in[i] = IntValue(pg.rank(), i, 2);
  Status st = pg.AllGather(in.data(), count, out.data());
  if (!st.ok()) return StatusText("AllGather", count, st);
  for (int r = 0; r < pg.size(); ++r) {
    for (size_t i = 0; i < count; ++i) {
      float want = IntValue(r, i, 2);
      if (out[r * count + i] != want)
        return Mismatch("AllGather", count, r * count + i, out[r * count + i], want);
    }
  }
  return "";
}

std::string CheckReduceScatterSum(ProcessGroup& pg, size_t count) {
  size_t total = count * pg.size();
  std::vector<float> in(total), out(count, -1e9f);
  for (size_t i = 0; i < total; ++i) in[i] = IntValue(pg.rank(), i, 3);
  Status st = pg.ReduceScatterSum(in.data(), count, out.data());
  if (!st.ok()) return StatusText("ReduceScatterSum", count, st);
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < pg.size(); ++r) want += IntValue(r, pg.rank() * count + i, 3);
    if (out[i] != want) return Mismatch("ReduceScatterSum", count, i, out[i], want);
  }
  return "";
}

// Uneven counts: rank s sends (s + 2d) % 3 · max_count / 2 elements to rank d (some zero).
std::string CheckAllToAll(ProcessGroup& pg, size_t max_count) {
  int n = pg.size(), me = pg.rank();
  auto count_of = [&](int s, int d) {
    return static_cast<size_t>((s + 2 * d) % 3) * max_count / 2;
  };
  std::vector<size_t> send_counts(n), recv_counts(n);
  size_t send_total = 0, recv_total = 0;
  for (int r = 0; r < n; ++r) {
    send_counts[r] = count_of(me, r);
    recv_counts[r] = count_of(r, me);
    send_total += send_counts[r];
    recv_total += recv_counts[r];
  }
  // Element j of the piece s sends to d: IntValue(s, d * 1000003 + j, 4).
  std::vector<float> in(send_total), out(recv_total, -1e9f);
  size_t off = 0;
  for (int d = 0; d < n; ++d) {
    for (size_t j = 0; j < send_counts[d]; ++j) in[off++] = IntValue(me, d * 1000003 + j, 4);
  }
  Status st = pg.AllToAll(in.data(), send_counts, out.data(), recv_counts);
  if (!st.ok()) return StatusText("AllToAll", max_count, st);
  off = 0;
  for (int s = 0; s < n; ++s) {
    for (size_t j = 0; j < recv_counts[s]; ++j, ++off) {
      float want = IntValue(s, me * 1000003 + j, 4);
      if (out[off] != want) return Mismatch("AllToAll", max_count, off, out[off], want);
    }
  }
  return "";
}

std::string CheckBroadcast(ProcessGroup& pg, size_t count) {
  for (int root = 0; root < pg.size(); ++root) {
    std::vector<float> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = IntValue(pg.rank(), i, 5);
    Status st = pg.Broadcast(data.data(), count, root);
    if (!st.ok()) return StatusText("Broadcast", count, st);
    for (size_t i = 0; i < count; ++i) {
      if (data[i] != IntValue(root, i, 5))
        return Mismatch("Broadcast", count, i, data[i], IntValue(root, i, 5));
    }
  }
  return "";
}

std::string CheckBarrier(ProcessGroup& pg) {
  for (int k = 0; k < 50; ++k) {
    Status st = pg.Barrier();
    if (!st.ok()) return StatusText("Barrier", 0, st);
  }
  return "";
}

namespace {

std::string RunRank(const GroupSpec& spec, const RankFn& fn) {
  auto pg = CreateProcessGroup(spec);
  if (!pg.ok()) return "CreateProcessGroup failed: " + pg.status().ToString();
  return fn(**pg);
}

// A rank still running past `deadline_s` cannot be killed as a process can: RunRankThreads
// fails the test naming it and exits the test process.
std::string RunThreads(const GroupSpec& base, int size, const RankFn& fn, double deadline_s) {
  std::vector<std::string> errors(size);
  rank_threads::RunRankThreads(size,
                               [&](int r, const std::atomic<bool>&) {
                                 GroupSpec spec = base;
                                 spec.rank = r;
                                 spec.size = size;
                                 errors[r] = RunRank(spec, fn);
                               },
                               {/*timeout_s=*/deadline_s, /*straggler_timeout_s=*/deadline_s});
  std::string all;
  for (int r = 0; r < size; ++r) {
    if (!errors[r].empty()) all += "rank " + std::to_string(r) + ": " + errors[r] + "\n";
  }
  return all;
}

std::string RunProcesses(const GroupSpec& base, int size, const RankFn& fn, double deadline_s) {
  std::vector<pid_t> pids(size);
  std::vector<int> read_fds(size);
  for (int r = 0; r < size; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      GroupSpec spec = base;
      spec.rank = r;
      spec.size = size;
      std::string err = RunRank(spec, fn);
      if (!err.empty()) (void)!write(fds[1], err.data(), err.size());
      close(fds[1]);
      _exit(err.empty() ? 0 : 1);
    }
    close(fds[1]);
    pids[r] = pid;
    read_fds[r] = fds[0];
  }
  std::string all;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_s);
  for (int r = 0; r < size; ++r) {
    int wstatus = 0;
    pid_t got = 0;
    while ((got = waitpid(pids[r], &wstatus, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (got == 0) {
      kill(pids[r], SIGKILL);
      waitpid(pids[r], &wstatus, 0);
      all += "rank " + std::to_string(r) + ": still running after " + std::to_string(deadline_s) +
             " s (hang), killed\n";
      close(read_fds[r]);
      continue;
    }
    std::string msg;
    char buf[4096];
    ssize_t n;
    while ((n = read(read_fds[r], buf, sizeof(buf))) > 0) msg.append(buf, n);
    close(read_fds[r]);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
      all += "rank " + std::to_string(r) + ": " +
             (msg.empty() ? "died (wait status " + std::to_string(wstatus) + ")" : msg) + "\n";
    }
  }
  return all;
}

}  // namespace

std::string RunGroup(const GroupSpec& base, int size, const RankFn& fn, double deadline_s) {
  if (base.backend == "local") return RunThreads(base, size, fn, deadline_s);
  return RunProcesses(base, size, fn, deadline_s);
}

std::string FreeLoopbackAddress() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return "127.0.0.1:" + std::to_string(port);
}

std::string UniqueGroupName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace tandem::comm::testing
