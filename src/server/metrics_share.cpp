#include "server/metrics_share.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>
#include <type_traits>

namespace tandem::server {

// A slot: this header, then num_engines EngineTotals.
struct MetricsShare::SlotHeader {
  std::atomic<uint64_t> seq;  // odd while its owner writes
  uint64_t reserved;          // padding; the EngineTotals that follow stay aligned
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the seqlock lives in shared memory");

namespace {

Result<void*> Map(const std::string& name, int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    return Unavailable("metrics table " + name + ": mmap: " + std::strerror(err));
  }
  return p;
}

// Removes the tables of heads that no longer run (killed before they could remove theirs).
void RemoveTablesOfDeadHeads() {
  constexpr std::string_view kPrefix = "tandem-metrics-";
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view file = entry->d_name;
    if (file.rfind(kPrefix, 0) != 0) continue;
    const long pid = std::strtol(std::string(file.substr(kPrefix.size())).c_str(), nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      shm_unlink(("/" + std::string(file)).c_str());
    }
  }
  closedir(dir);
}

}  // namespace

std::string MetricsShareName(long head_pid) {
  return "/tandem-metrics-" + std::to_string(head_pid);
}

MetricsShare::MetricsShare(std::string name, int num_slots, int num_engines, void* table,
                           bool owner)
    : name_(std::move(name)),
      num_slots_(num_slots),
      num_engines_(num_engines),
      table_(static_cast<char*>(table)),
      owner_(owner) {}

size_t MetricsShare::SlotBytes(int num_engines) {
  static_assert(std::is_trivially_copyable_v<EngineTotals>, "EngineTotals live in shared memory");
  static_assert(sizeof(SlotHeader) % alignof(EngineTotals) == 0);
  return sizeof(SlotHeader) + sizeof(EngineTotals) * static_cast<size_t>(num_engines);
}

MetricsShare::SlotHeader& MetricsShare::Header(int slot) const {
  return *reinterpret_cast<SlotHeader*>(table_ +
                                        SlotBytes(num_engines_) * static_cast<size_t>(slot));
}

EngineTotals* MetricsShare::Engines(int slot) const {
  return reinterpret_cast<EngineTotals*>(reinterpret_cast<char*>(&Header(slot)) +
                                         sizeof(SlotHeader));
}

Result<std::unique_ptr<MetricsShare>> MetricsShare::Create(const std::string& name, int num_slots,
                                                           int num_engines) {
  const size_t bytes = SlotBytes(num_engines) * static_cast<size_t>(num_slots);
  RemoveTablesOfDeadHeads();
  shm_unlink(name.c_str());  // a killed process of the same pid left it: stale
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return Unavailable("metrics table " + name + ": " + std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {  // zero-filled: every slot empty
    const int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    return Unavailable("metrics table " + name + ": ftruncate: " + std::strerror(err));
  }
  auto mapped = Map(name, fd, bytes);
  if (!mapped.ok()) {
    shm_unlink(name.c_str());
    return mapped.status();
  }
  return std::unique_ptr<MetricsShare>(
      new MetricsShare(name, num_slots, num_engines, *mapped, /*owner=*/true));
}

Result<std::unique_ptr<MetricsShare>> MetricsShare::Open(const std::string& name, int num_slots,
                                                         int num_engines) {
  const size_t bytes = SlotBytes(num_engines) * static_cast<size_t>(num_slots);
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return Unavailable("metrics table " + name + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    return InvalidArgument("metrics table " + name + " has " + std::to_string(st.st_size) +
                           " bytes; expected " + std::to_string(bytes) + " (" +
                           std::to_string(num_slots) + " API servers, " +
                           std::to_string(num_engines) + " DP ranks)");
  }
  TANDEM_ASSIGN_OR_RETURN(void* mapped, Map(name, fd, bytes));
  return std::unique_ptr<MetricsShare>(
      new MetricsShare(name, num_slots, num_engines, mapped, /*owner=*/false));
}

MetricsShare::~MetricsShare() {
  munmap(table_, SlotBytes(num_engines_) * static_cast<size_t>(num_slots_));
  if (owner_) shm_unlink(name_.c_str());
}

void MetricsShare::Store(int slot, const MetricsTotals& totals) {
  if (slot < 0 || slot >= num_slots_) return;
  SlotHeader& header = Header(slot);
  EngineTotals* engines = Engines(slot);
  const size_t n = std::min(totals.engines.size(), static_cast<size_t>(num_engines_));
  header.seq.fetch_add(1, std::memory_order_acq_rel);  // odd: writing
  std::atomic_thread_fence(std::memory_order_release);
  if (n > 0) {  // an empty vector's data() may be null (memcpy from null: UB)
    std::memcpy(static_cast<void*>(engines), totals.engines.data(), sizeof(EngineTotals) * n);
  }
  header.seq.fetch_add(1, std::memory_order_release);  // even: done
}

void MetricsShare::Store(int slot, int32_t dp_rank, const EngineTotals& totals) {
  if (slot < 0 || slot >= num_slots_ || dp_rank < 0 || dp_rank >= num_engines_) return;
  SlotHeader& header = Header(slot);
  header.seq.fetch_add(1, std::memory_order_acq_rel);  // odd: writing
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(static_cast<void*>(Engines(slot) + dp_rank), &totals, sizeof(EngineTotals));
  header.seq.fetch_add(1, std::memory_order_release);  // even: done
}

MetricsTotals MetricsShare::Load(int slot) const {
  const SlotHeader& header = Header(slot);
  const EngineTotals* engines = Engines(slot);
  MetricsTotals out;
  out.engines.resize(static_cast<size_t>(num_engines_));
  const size_t bytes = sizeof(EngineTotals) * out.engines.size();
  // The writer holds a slot for well under a microsecond; a dead writer leaves it odd, so
  // give up after a while with what was read last (a stale total beats a hung scrape).
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const uint64_t before = header.seq.load(std::memory_order_acquire);
    if (before % 2 == 1) {
      std::this_thread::yield();
      continue;
    }
    std::memcpy(static_cast<void*>(out.engines.data()), engines, bytes);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (header.seq.load(std::memory_order_relaxed) == before) return out;
  }
  std::memcpy(static_cast<void*>(out.engines.data()), engines, bytes);
  return out;
}

MetricsTotals MetricsShare::SumOfOthers(int slot) const {
  MetricsTotals sum;
  for (int i = 0; i < num_slots_; ++i) {
    if (i != slot) sum.Add(Load(i));
  }
  return sum;
}

}  // namespace tandem::server
