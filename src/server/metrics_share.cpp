#include "server/metrics_share.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

namespace tandem::server {

struct MetricsShare::Slot {
  std::atomic<uint64_t> seq;  // odd while its owner writes
  MetricsTotals totals;
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

MetricsShare::MetricsShare(std::string name, int num_slots, Slot* slots, bool owner)
    : name_(std::move(name)), num_slots_(num_slots), slots_(slots), owner_(owner) {}

Result<std::unique_ptr<MetricsShare>> MetricsShare::Create(const std::string& name,
                                                           int num_slots) {
  const size_t bytes = sizeof(Slot) * static_cast<size_t>(num_slots);
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
      new MetricsShare(name, num_slots, static_cast<Slot*>(*mapped), /*owner=*/true));
}

Result<std::unique_ptr<MetricsShare>> MetricsShare::Open(const std::string& name,
                                                         int num_slots) {
  const size_t bytes = sizeof(Slot) * static_cast<size_t>(num_slots);
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return Unavailable("metrics table " + name + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    return InvalidArgument("metrics table " + name + " has " + std::to_string(st.st_size) +
                           " bytes; expected " + std::to_string(bytes) + " (" +
                           std::to_string(num_slots) + " API servers)");
  }
  TANDEM_ASSIGN_OR_RETURN(void* mapped, Map(name, fd, bytes));
  return std::unique_ptr<MetricsShare>(
      new MetricsShare(name, num_slots, static_cast<Slot*>(mapped), /*owner=*/false));
}

MetricsShare::~MetricsShare() {
  munmap(slots_, sizeof(Slot) * static_cast<size_t>(num_slots_));
  if (owner_) shm_unlink(name_.c_str());
}

void MetricsShare::Store(int slot, const MetricsTotals& totals) {
  if (slot < 0 || slot >= num_slots_) return;
  Slot& s = slots_[slot];
  s.seq.fetch_add(1, std::memory_order_acq_rel);  // odd: writing
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(static_cast<void*>(&s.totals), &totals, sizeof(totals));
  s.seq.fetch_add(1, std::memory_order_release);  // even: done
}

MetricsTotals MetricsShare::Load(int slot) const {
  const Slot& s = slots_[slot];
  MetricsTotals out;
  // The writer holds a slot for well under a microsecond; a dead writer leaves it odd, so
  // give up after a while with what was read last (a stale total beats a hung scrape).
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const uint64_t before = s.seq.load(std::memory_order_acquire);
    if (before % 2 == 1) {
      std::this_thread::yield();
      continue;
    }
    std::memcpy(&out, static_cast<const void*>(&s.totals), sizeof(out));
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.seq.load(std::memory_order_relaxed) == before) return out;
  }
  std::memcpy(&out, static_cast<const void*>(&s.totals), sizeof(out));
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
