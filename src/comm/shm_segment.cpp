// ShmSegment: see shm_segment.h. Invariant: a rank joins only a segment whose rank 0 echoed its
// fresh join token, so a stale segment from a crashed run can delay a join but never capture it.
#include "comm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "core/clock.h"

namespace tandem::comm {
namespace {

constexpr uint64_t kShmMagicReady = 0x74616e64656d5348ull;  // "tandemSH"
constexpr uint64_t kShmMagicDead = 0xdeaddeaddeaddeadull;

size_t HeaderBytes() { return (sizeof(ShmHeader) + 4095) / 4096 * 4096; }

std::string ShmNameOf(const std::string& group) {
  std::string name = "/tandem-";
  for (char c : group) name += (c == '/' ? '_' : c);
  if (name.size() > 200) name.resize(200);
  return name;
}

std::string ErrnoText() { return std::strerror(errno); }

uint64_t FreshToken() {
  std::random_device rd;
  uint64_t t = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ (static_cast<uint64_t>(getpid()) << 20);
  return t == 0 ? 1 : t;
}

void Pause() { std::this_thread::sleep_for(std::chrono::microseconds(500)); }

}  // namespace

Result<std::unique_ptr<ShmSegment>> ShmSegment::Open(const std::string& name, int rank, int size,
                                                     size_t slot_bytes, double timeout_s) {
  if (size > kShmMaxRanks) {
    return InvalidArgument("shm group '" + name + "': size " + std::to_string(size) +
                           " exceeds the shm backend's limit of " + std::to_string(kShmMaxRanks));
  }
  std::unique_ptr<ShmSegment> seg(new ShmSegment());
  seg->group_ = name;
  seg->shm_name_ = ShmNameOf(name);
  seg->rank_ = rank;
  seg->size_ = size;
  seg->slot_bytes_ = slot_bytes;
  seg->total_bytes_ = HeaderBytes() + slot_bytes * size;
  double deadline_s = MonotonicSeconds() + timeout_s;
  Status st = rank == 0 ? seg->CreateAsRankZero(deadline_s) : seg->JoinAsPeer(deadline_s);
  if (!st.ok()) return st;
  return seg;
}

Status ShmSegment::Map(int fd, size_t bytes) {
  base_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    return Internal("shm group '" + group_ + "': mmap of " + shm_name_ + " (" +
                    std::to_string(bytes) + " bytes) failed: " + ErrnoText());
  }
  header_ = static_cast<ShmHeader*>(base_);
  data_ = static_cast<char*>(base_) + HeaderBytes();
  return Status::Ok();
}

void ShmSegment::Unmap() {
  if (base_ != nullptr) munmap(base_, total_bytes_);
  base_ = nullptr;
  header_ = nullptr;
  data_ = nullptr;
}

Status ShmSegment::CreateAsRankZero(double deadline_s) {
  // A segment under our name is a stale one (names are unique per deployment): mark it dead so
  // peers that opened it let go, then unlink it.
  int old_fd = shm_open(shm_name_.c_str(), O_RDWR, 0600);
  if (old_fd >= 0) {
    struct stat st {};
    if (fstat(old_fd, &st) == 0 && static_cast<size_t>(st.st_size) >= sizeof(ShmHeader)) {
      void* p = mmap(nullptr, sizeof(ShmHeader), PROT_READ | PROT_WRITE, MAP_SHARED, old_fd, 0);
      if (p != MAP_FAILED) {
        static_cast<ShmHeader*>(p)->magic.store(kShmMagicDead, std::memory_order_release);
        munmap(p, sizeof(ShmHeader));
      }
    }
    close(old_fd);
    shm_unlink(shm_name_.c_str());
  }
  int fd = shm_open(shm_name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    return Internal("shm group '" + group_ + "': creating " + shm_name_ +
                    " failed: " + ErrnoText());
  }
  if (ftruncate(fd, static_cast<off_t>(total_bytes_)) != 0) {
    std::string err = ErrnoText();
    close(fd);
    shm_unlink(shm_name_.c_str());
    return Internal("shm group '" + group_ + "': sizing " + shm_name_ + " to " +
                    std::to_string(total_bytes_) + " bytes failed: " + err +
                    " (is /dev/shm full?)");
  }
  Status mapped = Map(fd, total_bytes_);
  close(fd);
  if (!mapped.ok()) {
    shm_unlink(shm_name_.c_str());
    return mapped;
  }
  header_->size = static_cast<uint32_t>(size_);
  header_->slot_bytes = slot_bytes_;
  header_->cells[0].pid.store(getpid());
  header_->magic.store(kShmMagicReady, std::memory_order_release);
  // Echo every peer's join token; done when all are echoed.
  std::vector<bool> welcomed(size_, false);
  welcomed[0] = true;
  int num_welcomed = 1;
  while (num_welcomed < size_) {
    for (int r = 1; r < size_; ++r) {
      uint64_t token = header_->cells[r].join_token.load(std::memory_order_acquire);
      if (token != 0 && header_->cells[r].welcome_token.load() != token) {
        header_->cells[r].welcome_token.store(token, std::memory_order_release);
        if (!welcomed[r]) ++num_welcomed;
        welcomed[r] = true;
      }
    }
    if (num_welcomed == size_) break;
    if (MonotonicSeconds() > deadline_s) {
      std::string missing;
      for (int r = 1; r < size_; ++r) {
        if (!welcomed[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      return Unavailable("shm group '" + group_ + "': ranks [" + missing +
                         "] did not join segment " + shm_name_ + " in time");
    }
    Pause();
  }
  // Every peer has it mapped: drop the name now, so a process killed before its destructor
  // runs (SIGTERM / SIGKILL of a server) leaves nothing behind in /dev/shm.
  shm_unlink(shm_name_.c_str());
  return Status::Ok();
}

Status ShmSegment::JoinAsPeer(double deadline_s) {
  const uint64_t token = FreshToken();
  std::string last_problem = "rank 0 has not created segment " + shm_name_;
  while (MonotonicSeconds() < deadline_s) {
    if (header_ == nullptr) {
      int fd = shm_open(shm_name_.c_str(), O_RDWR, 0600);
      if (fd < 0) {
        Pause();
        continue;
      }
      struct stat st {};
      if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < total_bytes_) {
        close(fd);  // being sized by rank 0, or a stale segment of another layout
        last_problem = "segment " + shm_name_ + " is smaller than this group needs";
        Pause();
        continue;
      }
      Status mapped = Map(fd, total_bytes_);
      close(fd);
      TANDEM_RETURN_IF_ERROR(mapped);
    }
    uint64_t magic = header_->magic.load(std::memory_order_acquire);
    if (magic == kShmMagicDead) {
      Unmap();  // stale; rank 0 is replacing it
      continue;
    }
    if (magic == kShmMagicReady) {
      if (header_->size != static_cast<uint32_t>(size_)) {
        last_problem = "segment " + shm_name_ + " has size " + std::to_string(header_->size);
        Unmap();
        Pause();
        continue;
      }
      ShmRankCell& cell = header_->cells[rank_];
      if (cell.join_token.load() != token) {
        cell.pid.store(getpid());
        cell.left.store(0);
        cell.join_token.store(token, std::memory_order_release);
      }
      if (cell.welcome_token.load(std::memory_order_acquire) == token) return Status::Ok();
      last_problem = "rank 0 has not acknowledged rank " + std::to_string(rank_);
    }
    Pause();
  }
  Unmap();
  return Unavailable("shm group '" + group_ + "': rank " + std::to_string(rank_) +
                     " could not join: " + last_problem + " (is rank 0 running?)");
}

void UnlinkShmGroup(const std::string& name) { shm_unlink(ShmNameOf(name).c_str()); }

ShmSegment::~ShmSegment() {
  if (header_ != nullptr) header_->cells[rank_].left.store(1, std::memory_order_release);
  Unmap();
  if (rank_ == 0) shm_unlink(shm_name_.c_str());
}

}  // namespace tandem::comm
