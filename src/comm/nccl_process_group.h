// "nccl" backend (CUDA builds only: compiled when CMake's TANDEM_WITH_NCCL is ON): one CUDA
// device per rank, collectives by NCCL on a dedicated non-blocking stream.
// Rendezvous: rank 0 serves a TcpStore on spec.rendezvous "host:port", creates the ncclUniqueId
// and publishes it under "nccl-unique-id/<group name>"; the other ranks wait for that key (at most
// spec.timeout_s) and then every rank joins with ncclCommInitRankConfig.
// Device: spec.device when >= 0, else rank % (number of visible CUDA devices).
// Data: the ProcessGroup interface takes HOST pointers (CPU tensors today), so every call copies
// host → device into a reusable device buffer, runs the collective, waits for the stream and
// copies device → host. A device-pointer interface would remove both copies; none exists yet.
// Timeouts: the communicator is non-blocking (ncclConfig_t.blocking = 0); every wait (join,
// enqueue, stream completion) polls ncclCommGetAsyncError and gives up after spec.timeout_s with
// ncclCommAbort, after which the group stays failed (kUnavailable) like the gloo backend.
// Errors: CUDA and NCCL failures become a Status naming the group, the call and the library's
// error string: kUnavailable for a peer or network failure (ncclRemoteError, ncclSystemError,
// timeout, no CUDA device), kInternal for everything else. No exception leaves this class.
// Not run on the CPU CI machine: there it is only compiled against the NCCL / CUDA headers.
// Reference: torch.distributed ProcessGroupNCCL (store-based unique-id exchange, abort on
// timeout through ncclCommGetAsyncError polling); NCCL docs "Fault tolerance".
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "comm/process_group.h"

// Opaque library handles, so that including this header needs neither nccl.h nor CUDA.
struct ncclComm;     // ncclComm_t is ncclComm*
struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace tandem::comm {

class NcclProcessGroup : public ProcessGroup {
 public:
  // Joins the group (blocks until every rank has joined or spec.timeout_s passed).
  // Errors: kInvalidArgument (malformed rendezvous, spec.device not a visible device),
  // kUnavailable (no CUDA device, store unreachable, unique id not published in time, ranks did
  // not join in time), kInternal (any other CUDA / NCCL failure).
  static Result<std::unique_ptr<ProcessGroup>> Create(const GroupSpec& spec);
  // Finalizes the communicator (at most timeout_s; aborts it after that) and frees the buffers.
  ~NcclProcessGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& backend() const override { return backend_; }

  Status AllReduceSum(float* data, size_t count) override;
  // size 2: ncclBfloat16 (one addition per element, so rounded once as the interface requires);
  // size > 2: NCCL's ring would round every partial sum, so the values are widened to f32 on the
  // host, all-reduced as f32 and rounded once.
  Status AllReduceSumBf16(uint16_t* data, size_t count) override;
  Status AllGather(const float* in, size_t count, float* out) override;
  Status ReduceScatterSum(const float* in, size_t count, float* out) override;
  // ncclSend / ncclRecv per peer inside one ncclGroupStart / ncclGroupEnd.
  Status AllToAll(const float* in, const std::vector<size_t>& send_counts, float* out,
                  const std::vector<size_t>& recv_counts) override;
  Status Broadcast(float* data, size_t count, int root) override;
  // A 1-element f32 all-reduce.
  Status Barrier() override;

 private:
  using Clock = std::chrono::steady_clock;
  // A device allocation that only grows; freed by the destructor.
  struct DeviceBuffer {
    void* ptr = nullptr;
    size_t size_bytes = 0;
  };

  explicit NcclProcessGroup(const GroupSpec& spec);
  // Exchanges the unique id through the TcpStore and initialises comm_, stream_.
  Status Join(const GroupSpec& spec);
  // Makes device_ current for this thread and fails fast when the group already failed.
  Status Begin(const char* op);
  // Grows `buffer` to at least size_bytes.
  Status Reserve(DeviceBuffer& buffer, size_t size_bytes, const char* op);
  // Polls ncclCommGetAsyncError until the communicator is no longer ncclInProgress.
  Status WaitComm(const char* op, Clock::time_point deadline);
  // Polls until stream_ has drained, checking the communicator for asynchronous errors.
  Status WaitStream(const char* op, Clock::time_point deadline);
  // Runs `enqueue` (NCCL calls on stream_), then waits for the communicator and the stream.
  template <typename Fn>
  Status RunCollective(const char* op, Fn&& enqueue);
  Status CopyToDevice(void* dst, const void* src, size_t size_bytes, const char* op);
  Status CopyToHost(void* dst, const void* src, size_t size_bytes, const char* op);
  // Error translation; `call` is the library function that failed. A CUDA error leaves the
  // communicator usable; an NCCL error aborts it (its state is unknown), so the group fails.
  Status CudaError(int err, const char* op, const char* call) const;
  Status NcclError(int result, const char* op, const char* call);
  // Ok for ncclSuccess and ncclInProgress (a non-blocking call still running), else NcclError.
  Status Launched(int result, const char* op, const char* call);
  // Aborts comm_ (after a timeout or an asynchronous error) and records `status` in failed_.
  Status Fail(Status status);

  std::string name_;
  int rank_;
  int size_;
  int device_ = -1;
  double timeout_s_;
  ncclComm* comm_ = nullptr;
  CUstream_st* stream_ = nullptr;
  DeviceBuffer send_;  // staging for the input
  DeviceBuffer recv_;  // staging for the output (in-place calls use send_ only)
  Status failed_;
  std::vector<float> scratch_;  // bf16 → f32 widening for groups larger than 2
  std::string backend_ = "nccl";
};

}  // namespace tandem::comm
