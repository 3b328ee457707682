// "gloo" backend: see gloo_process_group.h.
#include "comm/gloo_process_group.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "comm/bf16.h"
#include "comm/tcp_store.h"
#include "tensor/dtype.h"

namespace tandem::comm {
namespace {

// The local IP address the kernel would use to reach `host` (no packet is sent).
std::string LocalAddressToward(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) {
    return "127.0.0.1";
  }
  std::string local = "127.0.0.1";
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    char buf[INET_ADDRSTRLEN];
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof(buf)) != nullptr) {
      local = buf;
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  return local;
}

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace

GlooProcessGroup::GlooProcessGroup(const GroupSpec& spec)
    : name_(spec.name), rank_(spec.rank), size_(spec.size), timeout_s_(spec.timeout_s) {}

GlooProcessGroup::~GlooProcessGroup() {
  context_.reset();
  store_.reset();
  server_.reset();
}

Result<std::unique_ptr<ProcessGroup>> GlooProcessGroup::Create(const GroupSpec& spec) {
  auto host_port = SplitHostPort(spec.rendezvous);
  if (!host_port.ok()) {
    return InvalidArgument("gloo group '" + spec.name + "': " + host_port.status().message());
  }
  std::unique_ptr<GlooProcessGroup> pg(new GlooProcessGroup(spec));
  if (spec.rank == 0) {
    auto server = TcpStoreServer::Start(spec.rendezvous);
    if (!server.ok()) {
      return Status(server.status().code(),
                    "gloo group '" + spec.name + "': " + server.status().message());
    }
    pg->server_ = std::move(server).value();
  }
  auto store = TcpStoreClient::Connect(spec.name, spec.rendezvous, spec.timeout_s);
  if (!store.ok()) return store.status();
  pg->store_ = std::move(store).value();
  try {
    ::gloo::transport::tcp::attr attr;
    if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface != nullptr && *iface) {
      attr.iface = iface;
    } else {
      attr.hostname = LocalAddressToward(host_port->first, host_port->second);
    }
    auto device = ::gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<::gloo::rendezvous::Context>(spec.rank, spec.size);
    context->setTimeout(Millis(spec.timeout_s));
    context->connectFullMesh(*pg->store_, device);
    pg->context_ = std::move(context);
    // Everyone connected before anyone proceeds (and before rank 0 could drop the store).
    pg->store_->set("ready/" + std::to_string(spec.rank), {1});
    std::vector<std::string> keys;
    for (int r = 0; r < spec.size; ++r) keys.push_back("ready/" + std::to_string(r));
    pg->store_->wait(keys, Millis(spec.timeout_s));
  } catch (const std::exception& e) {
    return Unavailable("gloo group '" + spec.name + "': rank " + std::to_string(spec.rank) +
                       " could not connect the group via " + spec.rendezvous + ": " + e.what());
  }
  return std::unique_ptr<ProcessGroup>(std::move(pg));
}

template <typename Fn>
Status GlooProcessGroup::Guard(const char* op, Fn&& fn) {
  if (!failed_.ok()) return failed_;
  try {
    fn(++tag_);
    return Status::Ok();
  } catch (const std::exception& e) {
    failed_ = Unavailable("gloo group '" + name_ + "' " + op + " on rank " + std::to_string(rank_) +
                          " failed (peer gone or timeout after " + std::to_string(timeout_s_) +
                          " s): " + e.what());
    return failed_;
  }
}

Status GlooProcessGroup::AllReduceSum(float* data, size_t count) {
  if (count == 0 || size_ == 1) return Status::Ok();
  return Guard("AllReduceSum", [&](uint32_t tag) {
    ::gloo::AllreduceOptions opts(context_);
    opts.setOutput(data, count);
    opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&::gloo::sum<float>));
    opts.setTag(tag);
    ::gloo::allreduce(opts);
  });
}

Status GlooProcessGroup::AllReduceSumBf16(uint16_t* data, size_t count) {
  // Gloo has no bf16 type: widen to f32, reduce, round once.
  scratch_.resize(count);
  for (size_t i = 0; i < count; ++i) scratch_[i] = tensor::BFloat16ToFloat(data[i]);
  TANDEM_RETURN_IF_ERROR(AllReduceSum(scratch_.data(), count));
  for (size_t i = 0; i < count; ++i) data[i] = FloatToBFloat16(scratch_[i]);
  return Status::Ok();
}

Status GlooProcessGroup::AllGather(const float* in, size_t count, float* out) {
  if (count == 0) return Status::Ok();
  return Guard("AllGather", [&](uint32_t tag) {
    ::gloo::AllgatherOptions opts(context_);
    opts.setInput(const_cast<float*>(in), count);
    opts.setOutput(out, count * size_);
    opts.setTag(tag);
    ::gloo::allgather(opts);
  });
}

Status GlooProcessGroup::ReduceScatterSum(const float* in, size_t count, float* out) {
  // All-reduce of the whole [size × count] input, keep this rank's slice: size× the traffic of
  // a true reduce-scatter, acceptable for the rare cross-machine use.
  std::vector<float> all(in, in + count * size_);
  TANDEM_RETURN_IF_ERROR(AllReduceSum(all.data(), all.size()));
  std::memcpy(out, all.data() + rank_ * count, count * sizeof(float));
  return Status::Ok();
}

Status GlooProcessGroup::AllToAll(const float* in, const std::vector<size_t>& send_counts,
                                  float* out, const std::vector<size_t>& recv_counts) {
  if (send_counts.size() != static_cast<size_t>(size_) ||
      recv_counts.size() != static_cast<size_t>(size_)) {
    return InvalidArgument("gloo group '" + name_ + "' AllToAll: send_counts has " +
                           std::to_string(send_counts.size()) + " and recv_counts " +
                           std::to_string(recv_counts.size()) + " entries; expected " +
                           std::to_string(size_) + " (the group size)");
  }
  std::vector<int64_t> send(send_counts.begin(), send_counts.end());
  std::vector<int64_t> recv(recv_counts.begin(), recv_counts.end());
  // Gloo's alltoallv wants non-null buffers even when a side is empty.
  float dummy_in = 0, dummy_out = 0;
  size_t send_total = 0, recv_total = 0;
  for (int r = 0; r < size_; ++r) {
    send_total += send_counts[r];
    recv_total += recv_counts[r];
  }
  return Guard("AllToAll", [&](uint32_t tag) {
    ::gloo::AlltoallvOptions opts(context_);
    opts.setInput(send_total ? const_cast<float*>(in) : &dummy_in, send);
    opts.setOutput(recv_total ? out : &dummy_out, recv);
    opts.setTag(tag);
    ::gloo::alltoallv(opts);
  });
}

Status GlooProcessGroup::Broadcast(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return InvalidArgument("gloo group '" + name_ + "' Broadcast: root " + std::to_string(root) +
                           " outside [0, " + std::to_string(size_) + ")");
  }
  if (count == 0 || size_ == 1) return Status::Ok();
  return Guard("Broadcast", [&](uint32_t tag) {
    ::gloo::BroadcastOptions opts(context_);
    opts.setOutput(data, count);
    opts.setRoot(root);
    opts.setTag(tag);
    ::gloo::broadcast(opts);
  });
}

Status GlooProcessGroup::Barrier() {
  if (size_ == 1) return Status::Ok();
  return Guard("Barrier", [&](uint32_t tag) {
    ::gloo::BarrierOptions opts(context_);
    opts.setTag(tag);
    ::gloo::barrier(opts);
  });
}

}  // namespace tandem::comm
