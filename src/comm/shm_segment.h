// ShmSegment: the POSIX shared-memory segment of one "shm" group, and its rendezvous.
// Layout: a header (magic, group size, one cache line per rank: epoch counter, join handshake,
// pid, left flag) followed by one slot per rank, each slot split in two halves used on
// alternating epochs. Rank 0 creates the segment "/tandem-<group name>"; a segment left by a
// crashed run is first marked dead (so ranks that opened it let go) and unlinked. Other ranks
// open it, write a fresh join token and wait until rank 0 echoes it: a stale segment never
// echoes, so nobody joins one. Reference: the epoch/slot design of vLLM's shm_broadcast and
// SGLang's custom all-reduce, simplified to one writer per slot.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace tandem::comm {

inline constexpr int kShmMaxRanks = 64;

struct alignas(64) ShmRankCell {
  std::atomic<uint64_t> epoch;          // collectives this rank has arrived at
  std::atomic<uint64_t> join_token;     // written by the rank when it joins
  std::atomic<uint64_t> welcome_token;  // rank 0's echo of join_token
  std::atomic<int64_t> pid;
  std::atomic<uint32_t> left;  // 1 once the rank destroyed its group
};

struct ShmHeader {
  std::atomic<uint64_t> magic;  // kShmMagicReady once rank 0 initialised; kShmMagicDead when stale
  uint32_t size;
  uint32_t reserved;
  uint64_t slot_bytes;
  ShmRankCell cells[kShmMaxRanks];
};

// Removes the /dev/shm name of group `name`'s segment, if any (processes that mapped it keep
// their mapping). For a rank 0 that must exit at once, before its destructor could do it.
// Async-signal-safe apart from building the name.
void UnlinkShmGroup(const std::string& name);

class ShmSegment {
 public:
  // Creates (rank 0) or joins (others) the segment of group `name`; returns once every rank
  // joined. slot_bytes: bytes of one rank's slot (two halves). Errors: kInvalidArgument (size
  // over kShmMaxRanks or differing from rank 0's), kUnavailable (timeout, naming the group and
  // the missing ranks), kInternal (shm_open/mmap failed, with errno text).
  static Result<std::unique_ptr<ShmSegment>> Open(const std::string& name, int rank, int size,
                                                  size_t slot_bytes, double timeout_s);
  ~ShmSegment();  // marks this rank left; rank 0 unlinks the name

  ShmHeader& header() { return *header_; }
  // Half `parity` (0/1) of rank r's slot; half_bytes() bytes.
  char* half(int r, uint64_t parity) {
    return data_ + static_cast<size_t>(r) * slot_bytes_ + (parity & 1) * (slot_bytes_ / 2);
  }
  size_t half_bytes() const { return slot_bytes_ / 2; }
  const std::string& shm_name() const { return shm_name_; }

 private:
  ShmSegment() = default;
  Status CreateAsRankZero(double deadline_s);
  Status JoinAsPeer(double deadline_s);
  Status Map(int fd, size_t bytes);
  void Unmap();

  std::string group_;
  std::string shm_name_;
  int rank_ = 0;
  int size_ = 0;
  size_t slot_bytes_ = 0;
  size_t total_bytes_ = 0;
  void* base_ = nullptr;
  ShmHeader* header_ = nullptr;
  char* data_ = nullptr;
};

}  // namespace tandem::comm
