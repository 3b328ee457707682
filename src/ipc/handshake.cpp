#include "ipc/handshake.h"

#include "core/clock.h"
#include "core/logging.h"
#include "protocol/message.h"

namespace tandem::ipc {

using protocol::EngineHello;
using protocol::HandshakeReply;
using protocol::MessageType;

std::string DescribeSettingsMismatch(const Settings& ours, const std::string& our_host,
                                     const Settings& theirs, const std::string& their_host,
                                     int their_rank) {
  std::map<std::string, std::string> their_map(theirs.begin(), theirs.end());
  std::map<std::string, std::string> our_map(ours.begin(), ours.end());
  auto describe = [&](const std::string& key, const std::string& head_value,
                      const std::string& their_value) {
    return "configuration mismatch: DP rank " + std::to_string(their_rank) + " on " + their_host +
           " has " + key + " " + their_value + ", but the head on " + our_host + " has " + key +
           " " + head_value + "; start every machine with the same " + key;
  };
  for (const auto& [key, value] : ours) {
    auto it = their_map.find(key);
    const std::string theirs_value = it == their_map.end() ? "(unset)" : it->second;
    if (theirs_value != value) return describe(key, value, theirs_value);
  }
  for (const auto& [key, value] : theirs) {
    if (!our_map.count(key)) return describe(key, "(unset)", value);
  }
  return "";
}

HandshakeServer::HandshakeServer(HandshakeServerOptions options)
    : options_(std::move(options)), router_(SocketKind::kRouter) {}

Status HandshakeServer::Bind() { return router_.Bind(options_.bind_endpoint); }

void HandshakeServer::Reply(const std::string& identity, const HandshakeReply& reply) {
  Status st =
      router_.SendMultipart({identity, protocol::Encode(MessageType::kHandshakeReply, reply)});
  if (!st.ok()) TLOG_WARN("handshake: cannot answer an engine: {}", st.message());
}

Status HandshakeServer::HandleMessage(const std::vector<std::string>& frames,
                                      const std::function<void(const EngineHello&)>& on_ready) {
  if (frames.size() != 2) return Status::Ok();
  const std::string& identity = frames[0];
  auto type = protocol::PeekType(frames[1]);
  if (!type.ok()) return Status::Ok();
  if (*type == MessageType::kEngineHello) {
    EngineHello hello;
    if (!protocol::Decode(frames[1], &hello).ok()) return Status::Ok();
    const std::string who = hello.host + " (pid " + std::to_string(hello.pid) + ")";
    HandshakeReply reply;
    if (hello.dp_rank < 0 || hello.dp_rank >= options_.dp_size) {
      reply.error = "DP rank " + std::to_string(hello.dp_rank) + " from " + who +
                    " is out of range: --data-parallel-size " + std::to_string(options_.dp_size) +
                    " has ranks 0.." + std::to_string(options_.dp_size - 1) +
                    "; check --data-parallel-start-rank and --data-parallel-size-local";
      TLOG_ERROR("handshake: {}", reply.error);
      Reply(identity, reply);
      return Status::Ok();
    }
    auto existing = hello_by_rank_.find(hello.dp_rank);
    if (existing != hello_by_rank_.end() && rank_by_identity_[identity] != hello.dp_rank + 1) {
      const EngineHello& first = existing->second;
      reply.error = "DP rank " + std::to_string(hello.dp_rank) + " is already served by " +
                    first.host + " (pid " + std::to_string(first.pid) + "); " + who +
                    " asked for it too: give each machine its own --data-parallel-start-rank";
      TLOG_ERROR("handshake: {}", reply.error);
      Reply(identity, reply);
      return Status::Ok();
    }
    const std::string mismatch = DescribeSettingsMismatch(
        options_.settings, options_.host, hello.settings, hello.host, hello.dp_rank);
    if (!mismatch.empty()) {
      reply.error = mismatch;
      Reply(identity, reply);
      return InvalidArgument(mismatch);
    }
    hello_by_rank_[hello.dp_rank] = hello;
    rank_by_identity_[identity] = hello.dp_rank + 1;  // +1: 0 means unknown
    reply = AcceptedReply();
    TLOG_INFO("handshake: DP rank {} is {} (requests at {}); loading its model", hello.dp_rank, who,
              hello.input_endpoint);
    Reply(identity, reply);
  } else if (*type == MessageType::kApiServerHello) {
    protocol::ApiServerHello hello;
    if (!protocol::Decode(frames[1], &hello).ok()) return Status::Ok();
    return HandleApiServerHello(identity, hello);
  } else if (*type == MessageType::kEngineReady) {
    protocol::EngineReadyInfo info;
    if (!protocol::Decode(frames[1], &info).ok()) return Status::Ok();
    auto it = hello_by_rank_.find(info.dp_rank);
    if (it == hello_by_rank_.end() || rank_by_identity_[identity] != info.dp_rank + 1) {
      return Status::Ok();
    }
    if (!ready_by_rank_[info.dp_rank]) {
      ready_by_rank_[info.dp_rank] = true;
      TLOG_INFO("handshake: DP rank {} ready ({} KV blocks)", info.dp_rank, info.num_gpu_blocks);
      on_ready(it->second);
    }
  }
  return Status::Ok();
}

Status HandshakeServer::RunUntilAllReady(double deadline_s,
                                         const std::function<void(const EngineHello&)>& on_ready,
                                         const std::function<bool()>& keep_going) {
  while (static_cast<int32_t>(ready_by_rank_.size()) < options_.dp_size) {
    if (keep_going && !keep_going()) {
      return Unavailable("start-up stopped before every DP rank was ready (shutting down)");
    }
    const double left_s = deadline_s - MonotonicSeconds();
    if (left_s <= 0) {
      std::string missing;
      for (int32_t r = 0; r < options_.dp_size; ++r) {
        if (!ready_by_rank_.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      return Unavailable("DP rank(s) " + missing +
                         " did not become ready before the start-up deadline "
                         "(TANDEM_ENGINE_READY_TIMEOUT_S / VLLM_ENGINE_READY_TIMEOUT_S); their "
                         "engines should dial " +
                         options_.bind_endpoint.substr(6) +
                         " (--data-parallel-address:--data-parallel-rpc-port)");
    }
    auto message = router_.RecvMultipart(static_cast<int>(std::min(left_s, 0.2) * 1000) + 1);
    if (!message.ok()) return message.status();
    if (!message->has_value()) continue;
    TANDEM_RETURN_IF_ERROR(HandleMessage(**message, on_ready));
  }
  return Status::Ok();
}

protocol::HandshakeReply HandshakeServer::AcceptedReply() const {
  HandshakeReply reply;
  reply.accepted = true;
  reply.output_endpoints = options_.output_endpoints;
  reply.stats_endpoint = options_.stats_endpoint;
  reply.publish_endpoint = options_.publish_endpoint;
  reply.group_backend = options_.group_backend;
  reply.group_name = options_.group_name;
  reply.ep_rendezvous = options_.ep_rendezvous;
  reply.dp_rendezvous = options_.dp_rendezvous;
  return reply;
}

Status HandshakeServer::HandleApiServerHello(const std::string& identity,
                                             const protocol::ApiServerHello& hello) {
  const std::string who =
      "the API machine " + hello.host + " (pid " + std::to_string(hello.pid) + ")";
  HandshakeReply reply;
  const int32_t last = hello.first_rank + hello.num_ranks - 1;
  if (hello.first_rank < 1 || hello.num_ranks < 1 || last >= options_.dp_size) {
    reply.error = "DP ranks " + std::to_string(hello.first_rank) + ".." + std::to_string(last) +
                  " of " + who +
                  " are out of range: the head serves from rank 0 and "
                  "--data-parallel-size " +
                  std::to_string(options_.dp_size) + " has ranks 0.." +
                  std::to_string(options_.dp_size - 1);
    TLOG_ERROR("handshake: {}", reply.error);
    Reply(identity, reply);
    return Status::Ok();
  }
  const std::string mismatch = DescribeSettingsMismatch(
      options_.settings, options_.host, hello.settings, hello.host, hello.first_rank);
  if (!mismatch.empty()) {
    // Refused, but not fatal: the API machine stops before starting any engine core, so the
    // deployment goes on without it.
    reply.error = mismatch;
    TLOG_ERROR("handshake: refused {}: {}", who, mismatch);
    Reply(identity, reply);
    return Status::Ok();
  }
  TLOG_INFO("handshake: {} serves its own API for DP rank(s) {}..{}", who, hello.first_rank, last);
  Reply(identity, AcceptedReply());
  return Status::Ok();
}

void HandshakeServer::ServeLateComers(const std::function<bool()>& keep_going) {
  auto ignore = [](const EngineHello&) {};
  while (keep_going()) {
    auto message = router_.RecvMultipart(200);
    if (!message.ok()) return;
    if (message->has_value()) (void)HandleMessage(**message, ignore);
  }
}

HandshakeClient::HandshakeClient(std::string head_endpoint)
    : head_endpoint_(std::move(head_endpoint)), dealer_(SocketKind::kDealer) {}

Result<HandshakeReply> HandshakeClient::Hello(const EngineHello& hello, double deadline_s) {
  return Exchange(protocol::Encode(MessageType::kEngineHello, hello),
                  "DP rank " + std::to_string(hello.dp_rank), deadline_s);
}

Result<HandshakeReply> HandshakeClient::Hello(const protocol::ApiServerHello& hello,
                                              double deadline_s,
                                              const std::atomic<bool>* cancelled) {
  return Exchange(protocol::Encode(MessageType::kApiServerHello, hello),
                  "the API servers of DP rank(s) " + std::to_string(hello.first_rank) + ".." +
                      std::to_string(hello.first_rank + hello.num_ranks - 1),
                  deadline_s, cancelled);
}

Result<HandshakeReply> HandshakeClient::Exchange(const std::string& frame, const std::string& who,
                                                 double deadline_s,
                                                 const std::atomic<bool>* cancelled) {
  TANDEM_RETURN_IF_ERROR(dealer_.Connect(head_endpoint_));
  TANDEM_RETURN_IF_ERROR(dealer_.Send(frame));
  const std::string address = head_endpoint_.substr(head_endpoint_.find("://") + 3);
  double next_log_s = MonotonicSeconds() + 10;
  while (true) {
    if (cancelled != nullptr && cancelled->load()) {
      return Unavailable(who + " stopped waiting for the head at " + address + ": shutdown signal");
    }
    const double now = MonotonicSeconds();
    if (now >= deadline_s) {
      return Unavailable(who + " got no answer from the head at " + address +
                         " before the start-up deadline (TANDEM_ENGINE_READY_TIMEOUT_S / "
                         "VLLM_ENGINE_READY_TIMEOUT_S); is the head running and "
                         "--data-parallel-address / --data-parallel-rpc-port right?");
    }
    if (now >= next_log_s) {
      TLOG_INFO("{}: still waiting for the head at {} ({:.0f} s left)", who, address,
                deadline_s - now);
      next_log_s = now + 10;
    }
    auto frame = dealer_.Recv(200);
    if (!frame.ok()) return frame.status();
    if (!frame->has_value()) continue;
    HandshakeReply reply;
    TANDEM_RETURN_IF_ERROR(protocol::Decode(**frame, &reply));
    if (!reply.accepted)
      return InvalidArgument("the head at " + address + " refused: " + reply.error);
    return reply;
  }
}

Status HandshakeClient::Ready(const protocol::EngineReadyInfo& info) {
  return dealer_.Send(protocol::Encode(MessageType::kEngineReady, info));
}

}  // namespace tandem::ipc
