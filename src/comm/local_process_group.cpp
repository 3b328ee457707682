// "local" backend: see local_process_group.h. Central invariant: between the two barriers of a
// collective every rank only reads the published buffers; outside them each rank owns its own.
#include "comm/local_process_group.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>

#include "comm/bf16.h"
#include "tensor/dtype.h"

namespace tandem::comm {

// What every member of one local group shares: membership, the barrier and the published
// pointers of the collective in progress.
class LocalHub {
 public:
  LocalHub(std::string name, int size, double timeout_s)
      : name_(std::move(name)),
        size_(size),
        timeout_s_(timeout_s),
        joined_(size, false),
        in_(size, nullptr),
        counts_(size, 0),
        send_counts_(size, nullptr) {}

  const std::string& name() const { return name_; }
  int size() const { return size_; }

  // Marks `rank` present and waits until every rank is. Errors: kInvalidArgument (rank taken),
  // kUnavailable (timeout, naming the missing ranks).
  Status Join(int rank) {
    std::unique_lock<std::mutex> lock(mu_);
    if (joined_[rank]) {
      return InvalidArgument("local group '" + name_ + "': rank " + std::to_string(rank) +
                             " joined twice (is the group name reused while still in use?)");
    }
    joined_[rank] = true;
    ++num_joined_;
    cv_.notify_all();
    auto deadline = Deadline();
    if (!cv_.wait_until(lock, deadline, [&] { return num_joined_ == size_; })) {
      std::string missing;
      for (int r = 0; r < size_; ++r) {
        if (!joined_[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      broken_ = true;
      cv_.notify_all();
      return Unavailable("local group '" + name_ + "': ranks [" + missing +
                         "] did not join within " + std::to_string(timeout_s_) + " s");
    }
    return Status::Ok();
  }

  // Generation barrier with the group's timeout. A timeout breaks the hub for every member.
  Status Barrier(int rank) {
    std::unique_lock<std::mutex> lock(mu_);
    if (broken_) return Broken();
    uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return Status::Ok();
    }
    cv_.wait_until(lock, Deadline(), [&] { return generation_ != generation || broken_; });
    if (generation_ != generation) return Status::Ok();
    if (!broken_) {
      broken_ = true;
      broken_reason_ = "rank " + std::to_string(rank) + " waited more than " +
                       std::to_string(timeout_s_) + " s for its peers";
      cv_.notify_all();
    }
    return Broken();
  }

  // A member leaves: peers still waiting in a barrier fail instead of hanging.
  void Leave(int rank) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!broken_) broken_reason_ = "rank " + std::to_string(rank) + " left the group";
    broken_ = true;
    cv_.notify_all();
  }

  // Published by each rank before the first barrier of a collective, read after it.
  std::vector<const void*>& in() { return in_; }
  std::vector<size_t>& counts() { return counts_; }
  std::vector<const std::vector<size_t>*>& send_counts() { return send_counts_; }

 private:
  std::chrono::steady_clock::time_point Deadline() const {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(timeout_s_));
  }
  Status Broken() const {
    return Unavailable("local group '" + name_ + "' is broken: " +
                       (broken_reason_.empty() ? "a peer timed out" : broken_reason_));
  }

  const std::string name_;
  const int size_;
  const double timeout_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<bool> joined_;
  int num_joined_ = 0;
  uint64_t generation_ = 0;
  int arrived_ = 0;
  bool broken_ = false;
  std::string broken_reason_;
  std::vector<const void*> in_;
  std::vector<size_t> counts_;
  std::vector<const std::vector<size_t>*> send_counts_;
};

namespace {

// name → hub; a hub lives while any member holds it.
std::mutex g_registry_mu;
std::map<std::string, std::weak_ptr<LocalHub>>& Registry() {
  static auto* registry = new std::map<std::string, std::weak_ptr<LocalHub>>();
  return *registry;
}

}  // namespace

Result<std::unique_ptr<ProcessGroup>> LocalProcessGroup::Create(const GroupSpec& spec) {
  std::shared_ptr<LocalHub> hub;
  {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    auto& slot = Registry()[spec.name];
    hub = slot.lock();
    if (!hub) {
      hub = std::make_shared<LocalHub>(spec.name, spec.size, spec.timeout_s);
      slot = hub;
    }
  }
  if (hub->size() != spec.size) {
    return InvalidArgument("local group '" + spec.name + "': size " + std::to_string(spec.size) +
                           " differs from the size " + std::to_string(hub->size()) +
                           " its first member gave");
  }
  TANDEM_RETURN_IF_ERROR(hub->Join(spec.rank));
  return std::unique_ptr<ProcessGroup>(new LocalProcessGroup(std::move(hub), spec.rank, spec.size));
}

LocalProcessGroup::LocalProcessGroup(std::shared_ptr<LocalHub> hub, int rank, int size)
    : hub_(std::move(hub)), rank_(rank), size_(size) {}

LocalProcessGroup::~LocalProcessGroup() { hub_->Leave(rank_); }

namespace {

Status CountMismatch(const std::string& group, const char* op, int rank, size_t expected,
                     size_t found) {
  return InvalidArgument("local group '" + group + "' " + op + ": rank " + std::to_string(rank) +
                         " passed count " + std::to_string(found) + ", rank 0 passed " +
                         std::to_string(expected) + " (every rank must pass the same count)");
}

}  // namespace

Status LocalProcessGroup::AllReduceSum(float* data, size_t count) {
  hub_->in()[rank_] = data;
  hub_->counts()[rank_] = count;
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  Status st;
  if (hub_->counts()[0] != count) {
    st = CountMismatch(hub_->name(), "AllReduceSum", rank_, hub_->counts()[0], count);
  }
  std::vector<float> sum(st.ok() ? count : 0, 0.0f);
  for (int r = 0; r < size_ && st.ok(); ++r) {
    const auto* src = static_cast<const float*>(hub_->in()[r]);
    for (size_t i = 0; i < count; ++i) sum[i] += src[i];
  }
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  if (st.ok()) std::memcpy(data, sum.data(), count * sizeof(float));
  return st;
}

Status LocalProcessGroup::AllReduceSumBf16(uint16_t* data, size_t count) {
  hub_->in()[rank_] = data;
  hub_->counts()[rank_] = count;
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  Status st;
  if (hub_->counts()[0] != count) {
    st = CountMismatch(hub_->name(), "AllReduceSumBf16", rank_, hub_->counts()[0], count);
  }
  std::vector<float> sum(st.ok() ? count : 0, 0.0f);
  for (int r = 0; r < size_ && st.ok(); ++r) {
    const auto* src = static_cast<const uint16_t*>(hub_->in()[r]);
    for (size_t i = 0; i < count; ++i) sum[i] += tensor::BFloat16ToFloat(src[i]);
  }
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  if (st.ok()) {
    for (size_t i = 0; i < count; ++i) data[i] = FloatToBFloat16(sum[i]);
  }
  return st;
}

Status LocalProcessGroup::AllGather(const float* in, size_t count, float* out) {
  hub_->in()[rank_] = in;
  hub_->counts()[rank_] = count;
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  Status st;
  if (hub_->counts()[0] != count) {
    st = CountMismatch(hub_->name(), "AllGather", rank_, hub_->counts()[0], count);
  }
  for (int r = 0; r < size_ && st.ok(); ++r) {
    std::memcpy(out + r * count, hub_->in()[r], count * sizeof(float));
  }
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  return st;
}

Status LocalProcessGroup::ReduceScatterSum(const float* in, size_t count, float* out) {
  hub_->in()[rank_] = in;
  hub_->counts()[rank_] = count;
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  Status st;
  if (hub_->counts()[0] != count) {
    st = CountMismatch(hub_->name(), "ReduceScatterSum", rank_, hub_->counts()[0], count);
  }
  std::vector<float> sum(st.ok() ? count : 0, 0.0f);
  for (int r = 0; r < size_ && st.ok(); ++r) {
    const float* src = static_cast<const float*>(hub_->in()[r]) + rank_ * count;
    for (size_t i = 0; i < count; ++i) sum[i] += src[i];
  }
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  if (st.ok()) std::memcpy(out, sum.data(), count * sizeof(float));
  return st;
}

Status LocalProcessGroup::AllToAll(const float* in, const std::vector<size_t>& send_counts,
                                   float* out, const std::vector<size_t>& recv_counts) {
  if (send_counts.size() != static_cast<size_t>(size_) ||
      recv_counts.size() != static_cast<size_t>(size_)) {
    // Every rank checks the same sizes, so a mistake fails everywhere without a barrier.
    return InvalidArgument("local group '" + hub_->name() + "' AllToAll: send_counts has " +
                           std::to_string(send_counts.size()) + " and recv_counts " +
                           std::to_string(recv_counts.size()) + " entries; expected " +
                           std::to_string(size_) + " (the group size)");
  }
  hub_->in()[rank_] = in;
  hub_->send_counts()[rank_] = &send_counts;
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  Status st;
  size_t out_offset = 0;
  for (int r = 0; r < size_; ++r) {
    const std::vector<size_t>& theirs = *hub_->send_counts()[r];
    if (theirs[rank_] != recv_counts[r]) {
      st = InvalidArgument("local group '" + hub_->name() + "' AllToAll: rank " +
                           std::to_string(rank_) + " expects " + std::to_string(recv_counts[r]) +
                           " elements from rank " + std::to_string(r) + ", which sends " +
                           std::to_string(theirs[rank_]));
      break;
    }
    size_t in_offset = 0;
    for (int d = 0; d < rank_; ++d) in_offset += theirs[d];
    if (recv_counts[r] > 0) {  // `out` may be null when nothing is received (memcpy: UB)
      std::memcpy(out + out_offset, static_cast<const float*>(hub_->in()[r]) + in_offset,
                  recv_counts[r] * sizeof(float));
    }
    out_offset += recv_counts[r];
  }
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  return st;
}

Status LocalProcessGroup::Broadcast(float* data, size_t count, int root) {
  if (root < 0 || root >= size_) {
    return InvalidArgument("local group '" + hub_->name() + "' Broadcast: root " +
                           std::to_string(root) + " outside [0, " + std::to_string(size_) + ")");
  }
  hub_->in()[rank_] = data;
  hub_->counts()[rank_] = count;
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  Status st;
  if (hub_->counts()[root] != count) {
    st = CountMismatch(hub_->name(), "Broadcast", rank_, hub_->counts()[root], count);
  } else if (rank_ != root) {
    std::memcpy(data, hub_->in()[root], count * sizeof(float));
  }
  TANDEM_RETURN_IF_ERROR(hub_->Barrier(rank_));
  return st;
}

Status LocalProcessGroup::Barrier() { return hub_->Barrier(rank_); }

}  // namespace tandem::comm
