#include "engine/heartbeat_thread.h"

#include <chrono>

#include "protocol/message.h"

namespace tandem::engine {

using protocol::MessageType;

Result<std::unique_ptr<HeartbeatThread>> HeartbeatThread::Start(
    const std::vector<std::string>& output_endpoints, const std::string& stats_endpoint,
    double interval_s, protocol::EngineStats initial) {
  std::unique_ptr<HeartbeatThread> hb(new HeartbeatThread());
  for (const std::string& endpoint : output_endpoints) {
    hb->outputs_.push_back(std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPush));
    TANDEM_RETURN_IF_ERROR(hb->outputs_.back()->Connect(endpoint));
  }
  if (!stats_endpoint.empty()) {
    hb->stats_socket_ = std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPush);
    TANDEM_RETURN_IF_ERROR(hb->stats_socket_->Connect(stats_endpoint));
  }
  hb->interval_s_ = interval_s;
  hb->stats_ = initial;
  hb->thread_ = std::thread([p = hb.get()] { p->Loop(); });
  return hb;
}

HeartbeatThread::~HeartbeatThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HeartbeatThread::Publish(const protocol::EngineStats& stats) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_ = stats;
}

void HeartbeatThread::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return stop_; });
    if (stop_) break;
    protocol::EngineOutputs heartbeat;
    heartbeat.stats = stats_;
    lock.unlock();
    // Never block: an API server that went away must not stall the heartbeat to the others.
    const std::string frame = protocol::Encode(MessageType::kOutputs, heartbeat);
    for (auto& out : outputs_) (void)out->TrySend(frame);
    if (stats_socket_) {
      (void)stats_socket_->TrySend(protocol::Encode(MessageType::kEngineStats, heartbeat.stats));
    }
    lock.lock();
  }
}

}  // namespace tandem::engine
