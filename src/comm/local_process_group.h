// "local" backend: the ranks are threads of one process. Members of a group meet in a hub
// (process-wide registry keyed by GroupSpec::name); every collective publishes each rank's
// pointers, passes a generation barrier, reads the peers' buffers, and passes a second barrier
// before anyone may touch its buffers again. Sums run in rank order, so every rank gets bitwise
// the same result. Meant for tests and single-process tools, not for speed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/process_group.h"

namespace tandem::comm {

class LocalHub;

class LocalProcessGroup : public ProcessGroup {
 public:
  // Joins (or creates) the hub named spec.name; blocks until spec.size members joined or
  // spec.timeout_s passed. Errors: kInvalidArgument (rank taken, size differs from the hub's),
  // kUnavailable (timeout; names the group and the missing ranks).
  static Result<std::unique_ptr<ProcessGroup>> Create(const GroupSpec& spec);
  ~LocalProcessGroup() override;

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
  LocalProcessGroup(std::shared_ptr<LocalHub> hub, int rank, int size);

  std::shared_ptr<LocalHub> hub_;
  int rank_;
  int size_;
  std::string backend_ = "local";
};

}  // namespace tandem::comm
