// "shm" backend: see shm_process_group.h for the epoch protocol.
#include "comm/shm_process_group.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "comm/bf16.h"
#include "core/clock.h"
#include "tensor/dtype.h"

namespace tandem::comm {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins before yielding: a peer on another core usually arrives within a few µs.
constexpr int kSpinIterations = 2000;
// Yields (another rank may need this core) for this long before sleeping between polls.
constexpr double kYieldPhaseS = 2e-3;

// dst[i] = Σ_r src_r[i] in rank order (every rank computes the same bits).
template <typename Load>
void SumInRankOrder(float* dst, size_t n, int size, Load load) {
  for (size_t i = 0; i < n; ++i) dst[i] = load(0, i);
  for (int r = 1; r < size; ++r) {
    for (size_t i = 0; i < n; ++i) dst[i] += load(r, i);
  }
}

}  // namespace

Result<std::unique_ptr<ProcessGroup>> ShmProcessGroup::Create(const GroupSpec& spec) {
  auto segment = ShmSegment::Open(spec.name, spec.rank, spec.size, kSlotBytes, spec.timeout_s);
  if (!segment.ok()) return segment.status();
  return std::unique_ptr<ProcessGroup>(new ShmProcessGroup(std::move(segment).value(), spec));
}

ShmProcessGroup::ShmProcessGroup(std::unique_ptr<ShmSegment> segment, const GroupSpec& spec)
    : segment_(std::move(segment)),
      name_(spec.name),
      rank_(spec.rank),
      size_(spec.size),
      timeout_s_(spec.timeout_s) {}

Status ShmProcessGroup::Arrive() {
  if (!failed_.ok()) return failed_;
  ++epoch_;
  segment_->header().cells[rank_].epoch.store(epoch_, std::memory_order_release);
  Status st = WaitForPeers();
  if (!st.ok()) failed_ = st;
  return st;
}

Status ShmProcessGroup::WaitForPeers() {
  ShmHeader& header = segment_->header();
  double start_s = -1;
  for (int r = 0; r < size_; ++r) {
    ShmRankCell& cell = header.cells[r];
    int spins = 0;
    while (cell.epoch.load(std::memory_order_acquire) < epoch_) {
      if (++spins < kSpinIterations) {
        CpuRelax();
        continue;
      }
      double now_s = MonotonicSeconds();
      if (start_s < 0) start_s = now_s;
      if (cell.left.load(std::memory_order_acquire) != 0 &&
          cell.epoch.load(std::memory_order_acquire) < epoch_) {
        return Unavailable("shm group '" + name_ + "': rank " + std::to_string(r) +
                           " left the group before collective #" + std::to_string(epoch_));
      }
      if (now_s - start_s > timeout_s_) {
        return Unavailable("shm group '" + name_ + "': rank " + std::to_string(r) + " (pid " +
                           std::to_string(cell.pid.load()) + ") did not reach collective #" +
                           std::to_string(epoch_) + " within " + std::to_string(timeout_s_) +
                           " s (peer gone or stuck)");
      }
      if (now_s - start_s < kYieldPhaseS) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }
  return Status::Ok();
}

Status ShmProcessGroup::AllReduceSum(float* data, size_t count) {
  const size_t chunk = HalfElems(sizeof(float));
  for (size_t off = 0; off < count; off += chunk) {
    size_t n = std::min(chunk, count - off);
    std::memcpy(MyHalf(), data + off, n * sizeof(float));
    TANDEM_RETURN_IF_ERROR(Arrive());
    SumInRankOrder(data + off, n, size_,
                   [&](int r, size_t i) { return reinterpret_cast<const float*>(PeerHalf(r))[i]; });
  }
  return Status::Ok();
}

Status ShmProcessGroup::AllReduceSumBf16(uint16_t* data, size_t count) {
  const size_t chunk = HalfElems(sizeof(uint16_t));
  scratch_.resize(std::min(chunk, count));
  for (size_t off = 0; off < count; off += chunk) {
    size_t n = std::min(chunk, count - off);
    std::memcpy(MyHalf(), data + off, n * sizeof(uint16_t));
    TANDEM_RETURN_IF_ERROR(Arrive());
    SumInRankOrder(scratch_.data(), n, size_, [&](int r, size_t i) {
      return tensor::BFloat16ToFloat(reinterpret_cast<const uint16_t*>(PeerHalf(r))[i]);
    });
    for (size_t i = 0; i < n; ++i) data[off + i] = FloatToBFloat16(scratch_[i]);
  }
  return Status::Ok();
}

Status ShmProcessGroup::AllGather(const float* in, size_t count, float* out) {
  const size_t chunk = HalfElems(sizeof(float));
  for (size_t off = 0; off < count; off += chunk) {
    size_t n = std::min(chunk, count - off);
    std::memcpy(MyHalf(), in + off, n * sizeof(float));
    TANDEM_RETURN_IF_ERROR(Arrive());
    for (int r = 0; r < size_; ++r) {
      std::memcpy(out + r * count + off, PeerHalf(r), n * sizeof(float));
    }
  }
  return Status::Ok();
}

Status ShmProcessGroup::ReduceScatterSum(const float* in, size_t count, float* out) {
  // Each epoch carries `chunk` elements for every destination: [size][chunk] in a half.
  const size_t chunk = HalfElems(sizeof(float)) / size_;
  for (size_t off = 0; off < count; off += chunk) {
    size_t n = std::min(chunk, count - off);
    auto* mine = reinterpret_cast<float*>(MyHalf());
    for (int d = 0; d < size_; ++d) {
      std::memcpy(mine + d * chunk, in + d * count + off, n * sizeof(float));
    }
    TANDEM_RETURN_IF_ERROR(Arrive());
    SumInRankOrder(out + off, n, size_, [&](int r, size_t i) {
      return reinterpret_cast<const float*>(PeerHalf(r))[rank_ * chunk + i];
    });
  }
  return Status::Ok();
}

Status ShmProcessGroup::AllToAll(const float* in, const std::vector<size_t>& send_counts,
                                 float* out, const std::vector<size_t>& recv_counts) {
  if (send_counts.size() != static_cast<size_t>(size_) ||
      recv_counts.size() != static_cast<size_t>(size_)) {
    return InvalidArgument("shm group '" + name_ + "' AllToAll: send_counts has " +
                           std::to_string(send_counts.size()) + " and recv_counts " +
                           std::to_string(recv_counts.size()) + " entries; expected " +
                           std::to_string(size_) + " (the group size)");
  }
  // Epoch 1: everyone's send counts, so all ranks agree on the number of rounds.
  std::memcpy(MyHalf(), send_counts.data(), size_ * sizeof(size_t));
  TANDEM_RETURN_IF_ERROR(Arrive());
  std::vector<size_t> matrix(size_ * size_);  // [source][destination]
  for (int s = 0; s < size_; ++s) {
    std::memcpy(&matrix[s * size_], PeerHalf(s), size_ * sizeof(size_t));
  }
  Status mismatch;
  size_t max_count = 0;
  for (int s = 0; s < size_; ++s) {
    if (matrix[s * size_ + rank_] != recv_counts[s] && mismatch.ok()) {
      mismatch = InvalidArgument(
          "shm group '" + name_ + "' AllToAll: rank " + std::to_string(rank_) + " expects " +
          std::to_string(recv_counts[s]) + " elements from rank " + std::to_string(s) +
          ", which sends " + std::to_string(matrix[s * size_ + rank_]));
    }
    for (int d = 0; d < size_; ++d) max_count = std::max(max_count, matrix[s * size_ + d]);
  }
  std::vector<size_t> send_off(size_, 0), recv_off(size_, 0);
  for (int r = 1; r < size_; ++r) {
    send_off[r] = send_off[r - 1] + send_counts[r - 1];
    recv_off[r] = recv_off[r - 1] + recv_counts[r - 1];
  }
  // Then rounds of [destination][piece] in a half.
  const size_t piece = HalfElems(sizeof(float)) / size_;
  for (size_t done = 0; done < max_count; done += piece) {
    auto* mine = reinterpret_cast<float*>(MyHalf());
    for (int d = 0; d < size_; ++d) {
      if (send_counts[d] > done) {
        size_t n = std::min(piece, send_counts[d] - done);
        std::memcpy(mine + d * piece, in + send_off[d] + done, n * sizeof(float));
      }
    }
    TANDEM_RETURN_IF_ERROR(Arrive());
    for (int s = 0; s < size_ && mismatch.ok(); ++s) {
      if (recv_counts[s] > done) {
        size_t n = std::min(piece, recv_counts[s] - done);
        std::memcpy(out + recv_off[s] + done,
                    reinterpret_cast<const float*>(PeerHalf(s)) + rank_ * piece, n * sizeof(float));
      }
    }
  }
  return mismatch;
}

Status ShmProcessGroup::Broadcast(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return InvalidArgument("shm group '" + name_ + "' Broadcast: root " + std::to_string(root) +
                           " outside [0, " + std::to_string(size_) + ")");
  }
  const size_t chunk = HalfElems(sizeof(float));
  for (size_t off = 0; off < count; off += chunk) {
    size_t n = std::min(chunk, count - off);
    if (rank_ == root) std::memcpy(MyHalf(), data + off, n * sizeof(float));
    TANDEM_RETURN_IF_ERROR(Arrive());
    if (rank_ != root) std::memcpy(data + off, PeerHalf(root), n * sizeof(float));
  }
  return Status::Ok();
}

Status ShmProcessGroup::Barrier() { return Arrive(); }

}  // namespace tandem::comm
