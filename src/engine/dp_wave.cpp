#include "engine/dp_wave.h"

#include "core/logging.h"
#include "protocol/dp_messages.h"
#include "protocol/message.h"

namespace tandem::engine {

using protocol::MessageType;

DpWave::DpWave(AnyBusyFn any_busy, int sync_interval_steps, ipc::ZmqSocket* coordinator,
               int32_t dp_rank)
    : socket_(ipc::SocketKind::kSub),
      any_busy_(std::move(any_busy)),
      sync_interval_steps_(sync_interval_steps),
      coordinator_(coordinator),
      dp_rank_(dp_rank) {}

Result<std::unique_ptr<DpWave>> DpWave::Connect(const std::string& wave_endpoint,
                                                AnyBusyFn any_busy, int sync_interval_steps,
                                                ipc::ZmqSocket* coordinator, int32_t dp_rank) {
  if (!any_busy || wave_endpoint.empty() || coordinator == nullptr || sync_interval_steps < 1) {
    return InvalidArgument("engine " + std::to_string(dp_rank) +
                           " steps in lock-step (DP waves) but has no DP sync group, wave "
                           "endpoint or coordinator");
  }
  std::unique_ptr<DpWave> wave(
      new DpWave(std::move(any_busy), sync_interval_steps, coordinator, dp_rank));
  TANDEM_RETURN_IF_ERROR(wave->socket_.Connect(wave_endpoint));
  return wave;
}

void DpWave::Begin() {
  running_ = true;
  steps_in_wave_ = 0;
}

Result<bool> DpWave::DrainStartWaves() {
  bool joined = false;
  while (true) {
    TANDEM_ASSIGN_OR_RETURN(std::optional<std::string> frame, socket_.Recv(0));
    if (!frame.has_value()) return joined;
    Result<MessageType> type = protocol::PeekType(*frame);
    if (!type.ok() || *type != MessageType::kStartWave) continue;  // load snapshots
    protocol::StartWave start;
    if (!protocol::Decode(*frame, &start).ok()) continue;
    if (running_ || start.wave < wave_) continue;  // in it already, or it is over
    TLOG_DEBUG("DP rank {} joins wave {} started by DP rank {}", dp_rank_, start.wave,
               start.dp_rank);
    wave_ = start.wave;
    Begin();
    joined = true;
  }
}

bool DpWave::OnRequest() {
  if (running_) return false;
  Begin();
  const protocol::StartWave start{wave_, dp_rank_};
  if (Status st = coordinator_->Send(protocol::Encode(MessageType::kStartWave, start)); !st.ok()) {
    // The other ranks will not join; this rank's first collective will time out and say so.
    TLOG_ERROR("DP rank {}: could not announce wave {}: {}", dp_rank_, wave_, st.ToString());
  }
  return true;
}

Status DpWave::AfterStep(bool has_unfinished_requests) {
  if (++steps_in_wave_ % sync_interval_steps_ != 0) return Status::Ok();
  Result<bool> any = any_busy_(has_unfinished_requests);
  if (!any.ok()) {
    return Unavailable("DP wave " + std::to_string(wave_) +
                       " sync failed: " + any.status().ToString());
  }
  if (!*any) {
    running_ = false;
    ++wave_;
  }
  return Status::Ok();
}

}  // namespace tandem::engine
