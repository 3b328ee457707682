#include "apps/dp_api_machine.h"

#include <unistd.h>

#include <atomic>
#include <memory>
#include <set>

#include "apps/api_server_runner.h"
#include "apps/api_server_siblings.h"
#include "apps/engine_launcher.h"
#include "apps/signal_thread.h"
#include "core/clock.h"
#include "core/logging.h"
#include "ipc/handshake.h"
#include "ipc/net_address.h"
#include "ipc/zmq_socket.h"

namespace tandem::apps {
namespace {

// K distinct free loopback ports for the API servers' output PULLs: only this machine's
// engine cores send to them.
Result<std::vector<std::string>> LocalOutputEndpoints(int count, int http_port) {
  std::set<int> taken = {http_port};
  std::vector<std::string> endpoints;
  for (int attempt = 0; attempt < 50 * count && static_cast<int>(endpoints.size()) < count;
       ++attempt) {
    TANDEM_ASSIGN_OR_RETURN(const int port, ipc::PickFreeTcpPort("127.0.0.1"));
    if (taken.insert(port).second) endpoints.push_back("tcp://127.0.0.1:" + std::to_string(port));
  }
  if (static_cast<int>(endpoints.size()) < count) {
    return Unavailable("found no free loopback ports for the API servers' output sockets");
  }
  return endpoints;
}

}  // namespace

int RunDataParallelApiMachine(const ServeFlags& flags, const EngineCoreConfig& base,
                              const std::vector<std::string>& serve_args) {
  const int first = flags.data_parallel_start_rank;
  const int last = first + flags.data_parallel_size_local - 1;
  const std::string head_address =
      flags.data_parallel_address + ":" + std::to_string(flags.data_parallel_rpc_port);
  const std::string head = "tcp://" + head_address;
  auto host = ipc::LocalAddressFor(flags.data_parallel_address);
  auto output_endpoints = LocalOutputEndpoints(flags.api_server_count, flags.port);
  for (const Status& st : {host.status(), output_endpoints.status()}) {
    if (!st.ok()) {
      TLOG_ERROR("{}", st.message());
      return 1;
    }
  }
  // Where the coordinator publishes (and whether the head takes our settings).
  protocol::ApiServerHello hello;
  hello.host = *host;
  hello.pid = getpid();
  hello.first_rank = first;
  hello.num_ranks = flags.data_parallel_size_local;
  hello.settings = SharedSettings(base);
  ipc::HandshakeClient handshake(head);
  TLOG_INFO("API machine for DP rank(s) {}..{} of {}: asking the head at {} for its coordinator",
            first, last, flags.data_parallel_size, head_address);
  Result<protocol::HandshakeReply> reply = Unavailable("no reply");
  std::atomic<bool> cancelled{false};
  {
    // SIGINT / SIGTERM while the head is not there yet stop the wait (the signals are blocked
    // in every thread; without a SignalThread they stayed pending for the whole deadline).
    SignalThread waiting_signals([&](int sig) {
      TLOG_INFO("signal {}: no longer waiting for the head", sig);
      cancelled = true;
    });
    reply = handshake.Hello(hello, MonotonicSeconds() + base.ready_timeout_s, &cancelled);
  }
  if (cancelled) {
    return 0;
  }
  if (!reply.ok()) {
    TLOG_ERROR("{}", reply.status().message());
    return 1;
  }
  const ScopedMetricsShare metrics_share(flags);  // API servers 1..K-1 sum into it
  auto parts = StartDataParallelApiServer(flags, (*output_endpoints)[0], reply->publish_endpoint);
  if (!parts.ok()) {
    TLOG_ERROR("{}", parts.status().message());
    return 1;
  }
  auto& http = *parts->http;
  auto client = parts->client;
  std::atomic<int> exit_code{0};
  std::atomic<bool> stopping{false};
  SignalThread signals([&](int sig) {
    TLOG_INFO("signal {}: shutting down", sig);
    stopping = true;
    http.Stop();
  });
  std::vector<std::unique_ptr<ChildProcess>> children;
  SpawnSiblingApiServers(flags, *output_endpoints, reply->publish_endpoint, serve_args, stopping,
                         &children);
  for (int i = 0; i < flags.data_parallel_size_local; ++i) {
    EngineCoreConfig cfg = base;
    cfg.dp_rank = first + i;
    cfg.dp_local_rank = i;
    cfg.handshake_endpoint = head;
    cfg.output_endpoints = *output_endpoints;  // answer this machine's API servers
    children.push_back(std::make_unique<ChildProcess>());
    Status st = children.back()->Spawn(
        EngineCoreArgs(cfg), [&, rank = cfg.dp_rank](const std::string& what) {
          if (stopping) return;
          if (!client->IsReady()) {
            TLOG_ERROR("DP rank {}: {} before it was ready; see its error above", rank, what);
            exit_code = 1;
            http.Stop();
          } else {
            client->MarkEngineDead(what, rank);
          }
        });
    if (!st.ok()) TLOG_ERROR("{}", st.message());
  }
  TLOG_INFO(
      "API server(s) on {}://{}:{} for DP rank(s) {}..{} (health is 503 until they are "
      "ready)",
      flags.ssl_certfile.empty() ? "http" : "https", flags.host, flags.port, first, last);
  http.Run();
  stopping = true;
  client->Shutdown();
  const double child_stop_s = parts->engines_lost->lost ? 15.0 : 2.0;
  for (auto& child : children) child->Stop(child_stop_s);
  return parts->engines_lost->lost ? 1 : exit_code.load();
}

}  // namespace tandem::apps
