// ProcessGroup: the data plane's collectives (activations, never control messages — those are
// ipc/). One interface, several backends: "shm" (ranks on one machine, POSIX shared memory),
// "gloo" (TCP across machines; honours GLOO_SOCKET_IFNAME), "local" (threads of one process,
// for tests and single-process tools), NCCL in CUDA builds.
// Every call is collective: all ranks of the group call it in the same order with the same
// `count` (AllToAll: matching counts). Reference: torch.distributed semantics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::comm {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;  // 0 … size-1 within this group
  virtual int size() const = 0;
  virtual const std::string& backend() const = 0;

  // In place: data[i] = Σ over ranks of data[i]. data: [count] f32.
  // Errors (every method): kUnavailable when a peer is gone or the group's timeout passed.
  virtual Status AllReduceSum(float* data, size_t count) = 0;
  // Same for bf16 values (uint16 bit patterns); the sum is accumulated in f32 and rounded once.
  virtual Status AllReduceSumBf16(uint16_t* data, size_t count) = 0;
  // out: [size × count] f32, rank r's `in` at out + r·count.
  virtual Status AllGather(const float* in, size_t count, float* out) = 0;
  // in: [size × count] f32; out: [count] = Σ over ranks of their in[rank()·count …].
  virtual Status ReduceScatterSum(const float* in, size_t count, float* out) = 0;
  // Sends send_counts[r] elements to rank r (taken from `in` in rank order) and receives
  // recv_counts[r] elements from rank r (written to `out` in rank order). f32 elements; int32
  // payloads travel bit-cast. send_counts / recv_counts: [size].
  virtual Status AllToAll(const float* in, const std::vector<size_t>& send_counts, float* out,
                          const std::vector<size_t>& recv_counts) = 0;
  // data: [count] f32, root's values copied to every rank.
  virtual Status Broadcast(float* data, size_t count, int root) = 0;
  virtual Status Barrier() = 0;
};

struct GroupSpec {
  std::string backend = "shm";  // shm | gloo | local | nccl (CUDA builds with TANDEM_WITH_NCCL)
  std::string name;             // unique per group and deployment, e.g. "tp-dp0-<port>"
  int rank = 0;
  int size = 1;
  // gloo, nccl: "host:port" of the rendezvous store (rank 0 listens there); shm: unused (the
  // name picks the segment); local: unused.
  std::string rendezvous;
  double timeout_s = 60;  // a collective waiting longer than this fails (kUnavailable)
  // nccl only: the CUDA device index this rank uses; -1 = rank % number of visible devices.
  int device = -1;
};

// Joins the group `spec` describes; blocks until every rank has joined or timeout_s passed.
// Errors: kInvalidArgument (unknown backend, rank outside [0, size)), kUnavailable (peers did
// not join in time, naming the group and the missing ranks when known), kUnimplemented ("nccl"
// in a build configured without TANDEM_WITH_NCCL).
Result<std::unique_ptr<ProcessGroup>> CreateProcessGroup(const GroupSpec& spec);

}  // namespace tandem::comm
