// "nccl" backend: see nccl_process_group.h. Compiled only when CMake's TANDEM_WITH_NCCL is ON.
#include "comm/nccl_process_group.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <exception>
#include <thread>

#include "comm/bf16.h"
#include "comm/tcp_store.h"
#include "tensor/dtype.h"

namespace tandem::comm {
namespace {

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::string UniqueIdKey(const std::string& group) { return "nccl-unique-id/" + group; }

}  // namespace

NcclProcessGroup::NcclProcessGroup(const GroupSpec& spec)
    : name_(spec.name), rank_(spec.rank), size_(spec.size), timeout_s_(spec.timeout_s) {}

NcclProcessGroup::~NcclProcessGroup() {
  if (device_ >= 0) cudaSetDevice(device_);
  if (comm_ != nullptr) {
    // Finalize flushes outstanding work; a peer that is gone would make it wait forever, so it
    // gets timeout_s and the communicator is aborted after that.
    ncclResult_t result = ncclCommFinalize(comm_);
    if (result == ncclSuccess || result == ncclInProgress) {
      result = WaitComm("~NcclProcessGroup", Clock::now() + Millis(timeout_s_)).ok()
                   ? ncclSuccess
                   : ncclInternalError;
    }
    if (comm_ != nullptr) {  // WaitComm aborts (and clears comm_) on timeout
      if (result == ncclSuccess) {
        ncclCommDestroy(comm_);
      } else {
        ncclCommAbort(comm_);
      }
      comm_ = nullptr;
    }
  }
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  if (send_.ptr != nullptr) cudaFree(send_.ptr);
  if (recv_.ptr != nullptr) cudaFree(recv_.ptr);
}

Result<std::unique_ptr<ProcessGroup>> NcclProcessGroup::Create(const GroupSpec& spec) {
  auto host_port = SplitHostPort(spec.rendezvous);
  if (!host_port.ok()) {
    return InvalidArgument("nccl group '" + spec.name + "': " + host_port.status().message());
  }
  int num_devices = 0;
  if (cudaError_t err = cudaGetDeviceCount(&num_devices); err != cudaSuccess || num_devices == 0) {
    return Unavailable("nccl group '" + spec.name + "': rank " + std::to_string(spec.rank) +
                       " sees no CUDA device (cudaGetDeviceCount: " +
                       (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices") +
                       "); the nccl backend needs one GPU per rank");
  }
  if (spec.device >= num_devices) {
    return InvalidArgument("nccl group '" + spec.name + "': device " + std::to_string(spec.device) +
                           " requested; this process sees " + std::to_string(num_devices) +
                           " CUDA device(s) (check CUDA_VISIBLE_DEVICES)");
  }
  std::unique_ptr<NcclProcessGroup> pg(new NcclProcessGroup(spec));
  pg->device_ = spec.device >= 0 ? spec.device : spec.rank % num_devices;
  TANDEM_RETURN_IF_ERROR(pg->Join(spec));
  return std::unique_ptr<ProcessGroup>(std::move(pg));
}

Status NcclProcessGroup::Join(const GroupSpec& spec) {
  const char* op = "join";
  if (cudaError_t err = cudaSetDevice(device_); err != cudaSuccess) {
    return CudaError(err, op, "cudaSetDevice");
  }
  if (cudaError_t err = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
      err != cudaSuccess) {
    return CudaError(err, op, "cudaStreamCreateWithFlags");
  }
  // Unique id exchange through our own TcpStore. The store (and rank 0's server) only lives
  // until ncclCommInitRankConfig completes: that is collective, so by then every rank has read
  // the id.
  ncclUniqueId id;
  std::unique_ptr<TcpStoreServer> server;
  if (rank_ == 0) {
    auto started = TcpStoreServer::Start(spec.rendezvous);
    if (!started.ok()) {
      return Status(started.status().code(),
                    "nccl group '" + name_ + "': " + started.status().message());
    }
    server = std::move(started).value();
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
      return NcclError(r, op, "ncclGetUniqueId");
    }
  }
  auto store = TcpStoreClient::Connect(name_, spec.rendezvous, timeout_s_);
  if (!store.ok()) return store.status();
  try {
    const std::string key = UniqueIdKey(name_);
    if (rank_ == 0) {
      const char* bytes = reinterpret_cast<const char*>(&id);
      (*store)->set(key, std::vector<char>(bytes, bytes + sizeof(id)));
    } else {
      (*store)->wait({key}, Millis(timeout_s_));
      std::vector<char> bytes = (*store)->get(key);
      if (bytes.size() != sizeof(id)) {
        return Internal("nccl group '" + name_ + "': unique id under '" + key + "' has " +
                        std::to_string(bytes.size()) + " bytes; expected " +
                        std::to_string(sizeof(id)) + " (an NCCL of another version on rank 0?)");
      }
      std::memcpy(&id, bytes.data(), sizeof(id));
    }
  } catch (const std::exception& e) {
    return Unavailable("nccl group '" + name_ + "': rank " + std::to_string(rank_) +
                       " could not exchange the NCCL unique id via " + spec.rendezvous + ": " +
                       e.what());
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every wait below is bounded by timeout_s
  ncclResult_t r = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
  if (r != ncclSuccess && r != ncclInProgress) return NcclError(r, op, "ncclCommInitRankConfig");
  return WaitComm(op, Clock::now() + Millis(timeout_s_));
}

Status NcclProcessGroup::Begin(const char* op) {
  if (!failed_.ok()) return failed_;
  if (cudaError_t err = cudaSetDevice(device_); err != cudaSuccess) {
    return CudaError(err, op, "cudaSetDevice");
  }
  return Status::Ok();
}

Status NcclProcessGroup::Reserve(DeviceBuffer& buffer, size_t size_bytes, const char* op) {
  if (buffer.size_bytes >= size_bytes) return Status::Ok();
  if (buffer.ptr != nullptr) {
    // cudaFree synchronizes the device; the stream is idle here (every call waits for it).
    cudaFree(buffer.ptr);
    buffer = DeviceBuffer{};
  }
  if (cudaError_t err = cudaMalloc(&buffer.ptr, size_bytes); err != cudaSuccess) {
    buffer.ptr = nullptr;
    return CudaError(err, op, ("cudaMalloc of " + std::to_string(size_bytes) + " bytes").c_str());
  }
  buffer.size_bytes = size_bytes;
  return Status::Ok();
}

Status NcclProcessGroup::WaitComm(const char* op, Clock::time_point deadline) {
  while (true) {
    ncclResult_t state = ncclSuccess;
    if (ncclResult_t r = ncclCommGetAsyncError(comm_, &state); r != ncclSuccess) {
      return NcclError(r, op, "ncclCommGetAsyncError");
    }
    if (state == ncclSuccess) return Status::Ok();
    if (state != ncclInProgress) return NcclError(state, op, "asynchronous NCCL operation");
    if (Clock::now() > deadline) {
      return Fail(Unavailable("nccl group '" + name_ + "' " + op + " on rank " +
                              std::to_string(rank_) + ": not done after " +
                              std::to_string(timeout_s_) +
                              " s (a rank missing or stuck); communicator aborted"));
    }
    std::this_thread::yield();
  }
}

Status NcclProcessGroup::WaitStream(const char* op, Clock::time_point deadline) {
  while (true) {
    cudaError_t err = cudaStreamQuery(stream_);
    if (err == cudaSuccess) return Status::Ok();
    if (err != cudaErrorNotReady) return CudaError(err, op, "cudaStreamQuery");
    ncclResult_t state = ncclSuccess;
    if (ncclResult_t r = ncclCommGetAsyncError(comm_, &state); r != ncclSuccess) {
      return NcclError(r, op, "ncclCommGetAsyncError");
    }
    if (state != ncclSuccess && state != ncclInProgress) {
      return NcclError(state, op, "asynchronous NCCL operation");
    }
    if (Clock::now() > deadline) {
      return Fail(Unavailable("nccl group '" + name_ + "' " + op + " on rank " +
                              std::to_string(rank_) + ": the collective did not finish within " +
                              std::to_string(timeout_s_) +
                              " s (peer gone or not calling); communicator aborted"));
    }
    std::this_thread::yield();
  }
}

template <typename Fn>
Status NcclProcessGroup::RunCollective(const char* op, Fn&& enqueue) {
  const Clock::time_point deadline = Clock::now() + Millis(timeout_s_);
  TANDEM_RETURN_IF_ERROR(enqueue());
  TANDEM_RETURN_IF_ERROR(WaitComm(op, deadline));
  return WaitStream(op, deadline);
}

Status NcclProcessGroup::CopyToDevice(void* dst, const void* src, size_t size_bytes,
                                      const char* op) {
  cudaError_t err = cudaMemcpyAsync(dst, src, size_bytes, cudaMemcpyHostToDevice, stream_);
  return err == cudaSuccess ? Status::Ok() : CudaError(err, op, "cudaMemcpyAsync host→device");
}

Status NcclProcessGroup::CopyToHost(void* dst, const void* src, size_t size_bytes, const char* op) {
  // Only after WaitStream: to pageable memory this copy is synchronous, and it must not be
  // queued behind a collective that may never finish.
  cudaError_t err = cudaMemcpyAsync(dst, src, size_bytes, cudaMemcpyDeviceToHost, stream_);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream_);
  return err == cudaSuccess ? Status::Ok() : CudaError(err, op, "cudaMemcpyAsync device→host");
}

Status NcclProcessGroup::CudaError(int err, const char* op, const char* call) const {
  auto cuda_err = static_cast<cudaError_t>(err);
  std::string message = "nccl group '" + name_ + "' " + op + " on rank " + std::to_string(rank_) +
                        " (device " + std::to_string(device_) + "): " + call +
                        " failed: " + cudaGetErrorString(cuda_err);
  if (cuda_err == cudaErrorNoDevice || cuda_err == cudaErrorInsufficientDriver ||
      cuda_err == cudaErrorDevicesUnavailable) {
    return Unavailable(std::move(message));
  }
  return Internal(std::move(message));
}

Status NcclProcessGroup::NcclError(int result, const char* op, const char* call) {
  auto nccl_result = static_cast<ncclResult_t>(result);
  std::string message = "nccl group '" + name_ + "' " + op + " on rank " + std::to_string(rank_) +
                        ": " + call + " failed: " + ncclGetErrorString(nccl_result);
  if (comm_ != nullptr) {
    if (const char* last = ncclGetLastError(comm_); last != nullptr && *last) {
      message += " (" + std::string(last) + ")";
    }
  }
  if (nccl_result == ncclRemoteError || nccl_result == ncclSystemError) {
    return Fail(Unavailable(std::move(message)));
  }
  return Fail(Internal(std::move(message)));
}

Status NcclProcessGroup::Launched(int result, const char* op, const char* call) {
  if (result == ncclSuccess || result == ncclInProgress) return Status::Ok();
  return NcclError(result, op, call);
}

Status NcclProcessGroup::Fail(Status status) {
  if (comm_ != nullptr) {
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  if (failed_.ok()) failed_ = status;
  return status;
}

Status NcclProcessGroup::AllReduceSum(float* data, size_t count) {
  const char* op = "AllReduceSum";
  if (count == 0) return Status::Ok();
  TANDEM_RETURN_IF_ERROR(Begin(op));
  const size_t size_bytes = count * sizeof(float);
  TANDEM_RETURN_IF_ERROR(Reserve(send_, size_bytes, op));
  TANDEM_RETURN_IF_ERROR(RunCollective(op, [&]() -> Status {
    TANDEM_RETURN_IF_ERROR(CopyToDevice(send_.ptr, data, size_bytes, op));
    ncclResult_t r =
        ncclAllReduce(send_.ptr, send_.ptr, count, ncclFloat32, ncclSum, comm_, stream_);
    return Launched(r, op, "ncclAllReduce");
  }));
  return CopyToHost(data, send_.ptr, size_bytes, op);
}

Status NcclProcessGroup::AllReduceSumBf16(uint16_t* data, size_t count) {
  const char* op = "AllReduceSumBf16";
  if (count == 0) return Status::Ok();
  if (size_ > 2) {
    scratch_.resize(count);
    for (size_t i = 0; i < count; ++i) scratch_[i] = tensor::BFloat16ToFloat(data[i]);
    TANDEM_RETURN_IF_ERROR(AllReduceSum(scratch_.data(), count));
    for (size_t i = 0; i < count; ++i) data[i] = FloatToBFloat16(scratch_[i]);
    return Status::Ok();
  }
  TANDEM_RETURN_IF_ERROR(Begin(op));
  const size_t size_bytes = count * sizeof(uint16_t);
  TANDEM_RETURN_IF_ERROR(Reserve(send_, size_bytes, op));
  TANDEM_RETURN_IF_ERROR(RunCollective(op, [&]() -> Status {
    TANDEM_RETURN_IF_ERROR(CopyToDevice(send_.ptr, data, size_bytes, op));
    ncclResult_t r =
        ncclAllReduce(send_.ptr, send_.ptr, count, ncclBfloat16, ncclSum, comm_, stream_);
    return Launched(r, op, "ncclAllReduce");
  }));
  return CopyToHost(data, send_.ptr, size_bytes, op);
}

Status NcclProcessGroup::AllGather(const float* in, size_t count, float* out) {
  const char* op = "AllGather";
  if (count == 0) return Status::Ok();
  TANDEM_RETURN_IF_ERROR(Begin(op));
  const size_t in_bytes = count * sizeof(float);
  const size_t out_bytes = in_bytes * size_;
  TANDEM_RETURN_IF_ERROR(Reserve(send_, in_bytes, op));
  TANDEM_RETURN_IF_ERROR(Reserve(recv_, out_bytes, op));
  TANDEM_RETURN_IF_ERROR(RunCollective(op, [&]() -> Status {
    TANDEM_RETURN_IF_ERROR(CopyToDevice(send_.ptr, in, in_bytes, op));
    ncclResult_t r = ncclAllGather(send_.ptr, recv_.ptr, count, ncclFloat32, comm_, stream_);
    return Launched(r, op, "ncclAllGather");
  }));
  return CopyToHost(out, recv_.ptr, out_bytes, op);
}

Status NcclProcessGroup::ReduceScatterSum(const float* in, size_t count, float* out) {
  const char* op = "ReduceScatterSum";
  if (count == 0) return Status::Ok();
  TANDEM_RETURN_IF_ERROR(Begin(op));
  const size_t out_bytes = count * sizeof(float);
  const size_t in_bytes = out_bytes * size_;
  TANDEM_RETURN_IF_ERROR(Reserve(send_, in_bytes, op));
  TANDEM_RETURN_IF_ERROR(Reserve(recv_, out_bytes, op));
  TANDEM_RETURN_IF_ERROR(RunCollective(op, [&]() -> Status {
    TANDEM_RETURN_IF_ERROR(CopyToDevice(send_.ptr, in, in_bytes, op));
    ncclResult_t r =
        ncclReduceScatter(send_.ptr, recv_.ptr, count, ncclFloat32, ncclSum, comm_, stream_);
    return Launched(r, op, "ncclReduceScatter");
  }));
  return CopyToHost(out, recv_.ptr, out_bytes, op);
}

Status NcclProcessGroup::AllToAll(const float* in, const std::vector<size_t>& send_counts,
                                  float* out, const std::vector<size_t>& recv_counts) {
  const char* op = "AllToAll";
  if (send_counts.size() != static_cast<size_t>(size_) ||
      recv_counts.size() != static_cast<size_t>(size_)) {
    return InvalidArgument("nccl group '" + name_ + "' AllToAll: send_counts has " +
                           std::to_string(send_counts.size()) + " and recv_counts " +
                           std::to_string(recv_counts.size()) + " entries; expected " +
                           std::to_string(size_) + " (the group size)");
  }
  size_t send_total = 0, recv_total = 0;
  for (int r = 0; r < size_; ++r) {
    send_total += send_counts[r];
    recv_total += recv_counts[r];
  }
  if (send_total == 0 && recv_total == 0) return Status::Ok();
  TANDEM_RETURN_IF_ERROR(Begin(op));
  TANDEM_RETURN_IF_ERROR(Reserve(send_, send_total * sizeof(float), op));
  TANDEM_RETURN_IF_ERROR(Reserve(recv_, recv_total * sizeof(float), op));
  TANDEM_RETURN_IF_ERROR(RunCollective(op, [&]() -> Status {
    if (send_total > 0) {
      TANDEM_RETURN_IF_ERROR(CopyToDevice(send_.ptr, in, send_total * sizeof(float), op));
    }
    auto* send_base = static_cast<float*>(send_.ptr);
    auto* recv_base = static_cast<float*>(recv_.ptr);
    size_t send_offset = 0, recv_offset = 0;
    ncclResult_t r = ncclGroupStart();
    for (int peer = 0; peer < size_ && (r == ncclSuccess || r == ncclInProgress); ++peer) {
      if (send_counts[peer] > 0) {
        r = ncclSend(send_base + send_offset, send_counts[peer], ncclFloat32, peer, comm_, stream_);
      }
      if ((r == ncclSuccess || r == ncclInProgress) && recv_counts[peer] > 0) {
        r = ncclRecv(recv_base + recv_offset, recv_counts[peer], ncclFloat32, peer, comm_, stream_);
      }
      send_offset += send_counts[peer];
      recv_offset += recv_counts[peer];
    }
    // The group is closed even after a failed ncclSend / ncclRecv (NCCL requires it).
    ncclResult_t end = ncclGroupEnd();
    if (r == ncclSuccess || r == ncclInProgress) r = end;
    return Launched(r, op, "ncclSend/ncclRecv group");
  }));
  if (recv_total == 0) return Status::Ok();
  return CopyToHost(out, recv_.ptr, recv_total * sizeof(float), op);
}

Status NcclProcessGroup::Broadcast(float* data, size_t count, int root) {
  const char* op = "Broadcast";
  if (root < 0 || root >= size_) {
    return InvalidArgument("nccl group '" + name_ + "' Broadcast: root " + std::to_string(root) +
                           " outside [0, " + std::to_string(size_) + ")");
  }
  if (count == 0) return Status::Ok();
  TANDEM_RETURN_IF_ERROR(Begin(op));
  const size_t size_bytes = count * sizeof(float);
  TANDEM_RETURN_IF_ERROR(Reserve(send_, size_bytes, op));
  TANDEM_RETURN_IF_ERROR(RunCollective(op, [&]() -> Status {
    if (rank_ == root) TANDEM_RETURN_IF_ERROR(CopyToDevice(send_.ptr, data, size_bytes, op));
    ncclResult_t r = ncclBroadcast(send_.ptr, send_.ptr, count, ncclFloat32, root, comm_, stream_);
    return Launched(r, op, "ncclBroadcast");
  }));
  if (rank_ == root) return Status::Ok();
  return CopyToHost(data, send_.ptr, size_bytes, op);
}

Status NcclProcessGroup::Barrier() {
  const char* op = "Barrier";
  TANDEM_RETURN_IF_ERROR(Begin(op));
  TANDEM_RETURN_IF_ERROR(Reserve(send_, sizeof(float), op));
  return RunCollective(op, [&]() -> Status {
    ncclResult_t r = ncclAllReduce(send_.ptr, send_.ptr, 1, ncclFloat32, ncclSum, comm_, stream_);
    return Launched(r, op, "ncclAllReduce");
  });
}

}  // namespace tandem::comm
