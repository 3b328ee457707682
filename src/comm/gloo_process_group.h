// "gloo" backend: ranks anywhere on the network, collectives by Gloo over TCP. Rendezvous through
// TcpStore (rank 0 serves it on spec.rendezvous "host:port"). The TCP device binds to
// GLOO_SOCKET_IFNAME when set, else to the local address this machine uses to reach the
// rendezvous host (127.0.0.1 when that is loopback). Gloo reports failures by exception; every
// call here catches them and returns kUnavailable naming the group, after which the group stays
// failed (Gloo's pairs are unusable after an I/O error).
// Reference: torch.distributed ProcessGroupGloo (device choice, store-based rendezvous).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/process_group.h"

namespace gloo {
class Context;
}

namespace tandem::comm {

class TcpStoreServer;
class TcpStoreClient;

class GlooProcessGroup : public ProcessGroup {
 public:
  // Errors: kInvalidArgument (malformed rendezvous), kUnavailable (store unreachable, a rank did
  // not join within spec.timeout_s, or the mesh could not connect).
  static Result<std::unique_ptr<ProcessGroup>> Create(const GroupSpec& spec);
  ~GlooProcessGroup() override;

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
  GlooProcessGroup(const GroupSpec& spec);
  // Runs one Gloo call, turning its exception into kUnavailable (and failing the group).
  template <typename Fn>
  Status Guard(const char* op, Fn&& fn);

  std::string name_;
  int rank_;
  int size_;
  double timeout_s_;
  std::unique_ptr<TcpStoreServer> server_;  // rank 0 only
  std::unique_ptr<TcpStoreClient> store_;
  std::shared_ptr<::gloo::Context> context_;
  uint32_t tag_ = 0;
  Status failed_;
  std::vector<float> scratch_;
  std::string backend_ = "gloo";
};

}  // namespace tandem::comm
