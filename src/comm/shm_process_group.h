// "shm" backend: the ranks are processes on one machine sharing a ShmSegment. Each collective is
// a sequence of epochs; in epoch e every rank writes its part into half e%2 of its own slot,
// publishes epoch e (release), waits until every rank published e (acquire), then reads the
// peers' halves. Two halves make one wait per epoch enough: a rank writes half e%2 again only at
// epoch e+2, after every rank arrived at e+1, i.e. finished reading epoch e. Messages larger
// than a half are chunked. Sums run in rank order, so every rank gets bitwise the same result.
// Waiting spins briefly, then yields, then sleeps; a peer that left or stays silent past the
// group's timeout gives kUnavailable, and the group stays failed afterwards.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "comm/shm_segment.h"

namespace tandem::comm {

class ShmProcessGroup : public ProcessGroup {
 public:
  // Bytes of one rank's slot (two halves of 4 MiB each).
  static constexpr size_t kSlotBytes = size_t{8} << 20;

  // Creates/joins the segment of spec.name. Errors: as ShmSegment::Open.
  static Result<std::unique_ptr<ProcessGroup>> Create(const GroupSpec& spec);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& backend() const override { return backend_; }

  Status AllReduceSum(float* data, size_t count) override;
  Status AllReduceSumBf16(uint16_t* data, size_t count) override;
  Status AllGather(const float* in, size_t count, float* out) override;
  Status ReduceScatterSum(const float* in, size_t count, float* out) override;
  Status AllToAll(const float* in, const std::vector<size_t>& send_counts, float* out,
                  const std::vector<size_t>& recv_counts) override;
  Status Broadcast(float* data, size_t count, int root) override;
  Status Barrier() override;

 private:
  ShmProcessGroup(std::unique_ptr<ShmSegment> segment, const GroupSpec& spec);

  // This rank's half for the next epoch (write before Arrive()).
  char* MyHalf() { return segment_->half(rank_, epoch_ + 1); }
  // Rank r's half of the current epoch (read after Arrive()).
  const char* PeerHalf(int r) { return segment_->half(r, epoch_); }
  // Publishes the next epoch and waits until every rank reached it.
  Status Arrive();
  Status WaitForPeers();
  size_t HalfElems(size_t elem_bytes) const { return segment_->half_bytes() / elem_bytes; }

  std::unique_ptr<ShmSegment> segment_;
  std::string name_;
  int rank_;
  int size_;
  double timeout_s_;
  uint64_t epoch_ = 0;
  Status failed_;  // once a wait failed, epochs may disagree: every later call fails
  std::vector<float> scratch_;
  std::string backend_ = "shm";
};

}  // namespace tandem::comm
