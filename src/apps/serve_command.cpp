#include "apps/serve_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "apps/api_server_runner.h"
#include "apps/api_server_siblings.h"
#include "apps/dp_api_machine.h"
#include "apps/engine_launcher.h"
#include "apps/model_files.h"
#include "apps/serve_flags.h"
#include "apps/signal_thread.h"
#include "core/clock.h"
#include "core/logging.h"
#include "http/listener.h"
#include "ipc/handshake.h"
#include "ipc/ipc_path.h"
#include "ipc/net_address.h"
#include "ipc/zmq_socket.h"
#include "router/coordinator.h"

namespace tandem::apps {
namespace {

// vLLM's default token budget with chunked prefill: 2048, but never below max_num_seqs.
int DefaultBatchedTokens(const ServeFlags& f) { return std::max(2048, f.max_num_seqs); }

EngineCoreConfig MakeEngineConfig(const ServeFlags& f, int max_model_len,
                                  const std::vector<int32_t>& eos_token_ids) {
  EngineCoreConfig c;
  c.model_path = f.model;
  c.tokenizer_path = f.tokenizer;
  c.dtype = f.dtype;
  c.kv_cache_dtype = f.kv_cache_dtype;
  c.device = f.device;
  c.quantization = f.quantization;
  c.enable_cpu_binding = f.enable_cpu_binding;
  c.q8_0_dot = f.q8_0_dot;
  c.profile_steps = f.profile_steps;
  c.num_threads = f.num_threads;
  c.max_model_len = max_model_len;
  c.max_num_seqs = f.max_num_seqs;
  c.scheduling_policy = f.scheduling_policy;
  c.max_num_batched_tokens =
      f.max_num_batched_tokens > 0 ? f.max_num_batched_tokens : DefaultBatchedTokens(f);
  c.block_size = f.block_size;
  c.enable_prefix_caching = f.enable_prefix_caching;
  c.enable_prefix_caching_given = f.enable_prefix_caching_given;
  c.gpu_memory_utilization = f.gpu_memory_utilization;
  c.kv_cache_memory_bytes = f.kv_cache_memory_bytes;
  c.seed = f.seed;
  if (!eos_token_ids.empty()) {
    c.eos_token_id = eos_token_ids.front();
  }
  c.dp_size = f.data_parallel_size;
  c.tensor_parallel_size = f.tensor_parallel_size;
  c.enable_expert_parallel = f.enable_expert_parallel;
  c.ready_timeout_s = ipc::EngineReadyTimeoutSeconds();
  c.spec_method = f.speculative.method;
  c.num_speculative_tokens = f.speculative.num_speculative_tokens;
  c.prompt_lookup_min = f.speculative.prompt_lookup_min;
  c.prompt_lookup_max = f.speculative.prompt_lookup_max;
  return c;
}

std::vector<std::string> ServeArgs(int argc, char** argv) {
  return std::vector<std::string>(argv + 1, argv + argc);
}

// --headless: engine cores for ranks S … S+L-1 that dial the head; no API server.
int RunHeadless(const ServeFlags& flags, const EngineCoreConfig& base) {
  const std::string head =
      "tcp://" + flags.data_parallel_address + ":" + std::to_string(flags.data_parallel_rpc_port);
  std::vector<std::unique_ptr<EngineLauncher>> engines;
  std::atomic<int> exit_code{0};
  std::atomic<int> running{0};
  SignalThread signals([&](int sig) {
    TLOG_INFO("signal {}: stopping the engine cores", sig);
    for (auto& e : engines) {
      e->Stop(0.1);
    }
  });
  for (int i = 0; i < flags.data_parallel_size_local; ++i) {
    EngineCoreConfig cfg = base;
    cfg.dp_rank = flags.data_parallel_start_rank + i;
    cfg.dp_local_rank = i;
    cfg.handshake_endpoint = head;
    engines.push_back(std::make_unique<EngineLauncher>());
    ++running;
    Status st = engines.back()->Launch(cfg, [&, rank = cfg.dp_rank](const std::string& what) {
      TLOG_INFO("DP rank {}: {}", rank, what);
      if (what.find("code 0") == std::string::npos) {
        exit_code = 1;
      }
      --running;
    });
    if (!st.ok()) {
      TLOG_ERROR("{}", st.message());
      return 1;
    }
  }
  TLOG_INFO("headless: DP rank(s) {}..{} dial the head at {}", flags.data_parallel_start_rank,
            flags.data_parallel_start_rank + flags.data_parallel_size_local - 1, head.substr(6));
  while (running > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return exit_code;
}

// One rank, one API server: the engine binds an ipc request pipe; no handshake.
int RunSingleRankHead(const ServeFlags& flags, EngineCoreConfig engine_cfg) {
  router::MpEngineClientOptions client_opts;
  client_opts.input_endpoint = ipc::MakeIpcEndpoint("engine0-input");
  client_opts.output_endpoint = ipc::MakeIpcEndpoint("engine0-output");
  client_opts.heartbeat_timeout_s = 5.0;
  engine_cfg.input_endpoint = client_opts.input_endpoint;
  engine_cfg.output_endpoint = client_opts.output_endpoint;
  auto parts = BuildApiServer(flags, client_opts, /*reuse_port=*/false);
  if (!parts.ok()) {
    TLOG_ERROR("{}", parts.status().message());
    return 1;
  }
  if (Status st = parts->client->Start(); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  if (Status st = parts->http->Start(); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  std::atomic<int> exit_code{0};
  std::atomic<bool> stopping{false};
  auto& http = *parts->http;
  auto client = parts->client;
  SignalThread signals([&](int sig) {
    TLOG_INFO("signal {}: shutting down (requests in flight get {} s: --shutdown-timeout)", sig,
              flags.shutdown_timeout);
    stopping = true;
    http.StopWhenIdle(flags.shutdown_timeout);
  });
  EngineLauncher launcher;
  Status launched = launcher.Launch(engine_cfg, [&](const std::string& what) {
    if (stopping) {
      return;  // we stopped it
    }
    if (!client->IsReady()) {
      TLOG_ERROR("{} before it was ready; see its error above", what);
      exit_code = 1;
      http.Stop();
    } else {
      client->MarkEngineDead(what);  // /health turns 503; in-flight requests fail
    }
  });
  if (!launched.ok()) {
    TLOG_ERROR("{}", launched.message());
    return 1;
  }
  TLOG_INFO("API server on {}://{}:{} (health is 503 until the model is loaded)",
            flags.ssl_certfile.empty() ? "http" : "https", flags.host, flags.port);
  http.Run();
  stopping = true;
  client->Shutdown();
  launcher.Stop();
  ipc::RemoveIpcPath(client_opts.input_endpoint);
  ipc::RemoveIpcPath(client_opts.output_endpoint);
  return parts->engines_lost->lost ? 1 : exit_code.load();
}

// Data parallel head: handshake ROUTER + coordinator + API server 0 here; API servers
// 1..K-1 and the local engine cores as children. Remote ranks join with --headless.
int RunDataParallelHead(const ServeFlags& flags, const EngineCoreConfig& base,
                        const std::vector<std::string>& serve_args) {
  const std::string addr =
      flags.data_parallel_address.empty() ? "127.0.0.1" : flags.data_parallel_address;
  auto tcp = [&](int port) { return "tcp://" + addr + ":" + std::to_string(port); };
  std::set<int> taken = {flags.data_parallel_rpc_port, flags.port};
  auto free_port = [&]() -> int {  // distinct ports: the kernel may hand one out twice
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto p = ipc::PickFreeTcpPort(addr);
      if (!p.ok()) {
        return -1;
      }
      if (taken.insert(*p).second) {
        return *p;
      }
    }
    return -1;
  };
  const int stats_port = free_port(), publish_port = free_port();
  // Expert parallel over DP ranks: gloo stores of the EP and DP groups, served by global rank
  // 0 (DP rank 0's engine core, on this machine) — shared memory when every rank is here.
  const bool ep_groups = flags.enable_expert_parallel;
  const bool all_local = flags.data_parallel_size_local == flags.data_parallel_size;
  const int ep_store_port = ep_groups && !all_local ? free_port() : 0;
  const int dp_store_port = ep_groups && !all_local ? free_port() : 0;
  std::vector<std::string> output_endpoints;
  for (int i = 0; i < flags.api_server_count; ++i) {
    output_endpoints.push_back(tcp(free_port()));
  }
  if (stats_port < 0 || publish_port < 0 || ep_store_port < 0 || dp_store_port < 0) {
    TLOG_ERROR("--data-parallel-address {} is not an address of this machine", addr);
    return 2;
  }
  router::CoordinatorOptions coord_opts;
  coord_opts.dp_size = flags.data_parallel_size;
  coord_opts.stats_endpoint = tcp(stats_port);
  coord_opts.publish_endpoint = tcp(publish_port);
  router::Coordinator coordinator(coord_opts);
  ipc::HandshakeServerOptions hs_opts;
  hs_opts.bind_endpoint = tcp(flags.data_parallel_rpc_port);
  hs_opts.dp_size = flags.data_parallel_size;
  hs_opts.host = addr;
  hs_opts.settings = SharedSettings(base);
  hs_opts.output_endpoints = output_endpoints;
  hs_opts.stats_endpoint = coord_opts.stats_endpoint;
  hs_opts.publish_endpoint = coord_opts.publish_endpoint;
  if (ep_groups) {
    hs_opts.group_backend = all_local ? "shm" : "gloo";
    hs_opts.group_name =
        "tandem-" + std::to_string(getpid()) + "-" + std::to_string(flags.data_parallel_rpc_port);
    if (!all_local) {
      hs_opts.ep_rendezvous = addr + ":" + std::to_string(ep_store_port);
      hs_opts.dp_rendezvous = addr + ":" + std::to_string(dp_store_port);
    }
  }
  ipc::HandshakeServer handshake(hs_opts);
  for (Status st : {coordinator.Start(), handshake.Bind()}) {
    if (!st.ok()) {
      TLOG_ERROR("{}", st.message());
      return 1;
    }
  }
  const ScopedMetricsShare metrics_share(flags);  // API servers 1..K-1 sum into it
  auto parts = StartDataParallelApiServer(flags, output_endpoints[0], coord_opts.publish_endpoint);
  if (!parts.ok()) {
    TLOG_ERROR("{}", parts.status().message());
    return 1;
  }
  auto& http = *parts->http;
  auto client = parts->client;
  std::atomic<int> exit_code{0};
  std::atomic<bool> stopping{false};
  SignalThread signals([&](int sig) {
    TLOG_INFO("signal {}: shutting down (requests in flight get {} s: --shutdown-timeout)", sig,
              flags.shutdown_timeout);
    stopping = true;
    http.StopWhenIdle(flags.shutdown_timeout);
  });
  std::vector<std::unique_ptr<ChildProcess>> children;
  SpawnSiblingApiServers(flags, output_endpoints, coord_opts.publish_endpoint, serve_args, stopping,
                         &children);
  for (int i = 0; i < flags.data_parallel_size_local; ++i) {
    EngineCoreConfig cfg = base;
    cfg.dp_rank = flags.data_parallel_start_rank + i;
    cfg.dp_local_rank = i;
    cfg.handshake_endpoint = hs_opts.bind_endpoint;
    children.push_back(std::make_unique<ChildProcess>());
    Status st = children.back()->Spawn(
        EngineCoreArgs(cfg), [&, rank = cfg.dp_rank](const std::string& what) {
          if (stopping) {
            return;
          }
          if (!client->IsReady()) {
            TLOG_ERROR("DP rank {}: {} before the deployment was ready; see its error above", rank,
                       what);
            exit_code = 1;
            http.Stop();
          } else {
            client->MarkEngineDead(what, rank);
          }
        });
    if (!st.ok()) {
      TLOG_ERROR("{}", st.message());
    }
  }
  std::thread handshake_thread([&] {
    const double deadline_s = MonotonicSeconds() + base.ready_timeout_s;
    Status st = handshake.RunUntilAllReady(
        deadline_s,
        [&](const protocol::EngineHello& hello) {
          coordinator.OnEngineReady(hello.dp_rank, hello.input_endpoint);
        },
        [&] { return !stopping.load(); });  // a SIGTERM during start-up ends the wait
    if (!st.ok()) {
      if (!stopping) {
        TLOG_ERROR("{}", st.message());
        exit_code = 1;
        http.Stop();
      }
      return;
    }
    TLOG_INFO("all {} DP ranks ready; API on {}://{}:{}", flags.data_parallel_size,
              flags.ssl_certfile.empty() ? "http" : "https", flags.host, flags.port);
    handshake.ServeLateComers([&] { return !stopping.load(); });
  });
  TLOG_INFO("head: {} DP rank(s) ({} here), {} API server(s); remote ranks dial {}:{}",
            flags.data_parallel_size, flags.data_parallel_size_local, flags.api_server_count, addr,
            flags.data_parallel_rpc_port);
  http.Run();
  stopping = true;
  client->Shutdown();
  // With no engine left, the other API servers answer their requests in flight and exit by
  // themselves (their clients see the ranks gone within a heartbeat): give them the time before
  // any signal. Otherwise they drain as this one did (--shutdown-timeout), then write their last
  // answers.
  if (parts->engines_lost->lost) {
    for (auto& child : children) {
      child->WaitExit(15.0);
    }
  }
  const double child_stop_s = flags.shutdown_timeout + http::HttpListener::kAbortWriteSeconds + 1;
  for (auto& child : children) {
    child->Stop(child_stop_s);
  }
  handshake_thread.join();
  coordinator.Stop();
  return parts->engines_lost->lost ? 1 : exit_code.load();
}

}  // namespace

int RunServeCommand(int argc, char** argv) {
  // Before any thread exists, so that every thread inherits the mask (see SignalThread).
  const sigset_t shutdown_signals = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr);
  ServeFlags flags;
  int exit_code = 0;
  if (!ParseServeFlags(argc, argv, &flags, &exit_code)) {
    return exit_code;
  }
  InitLogging(flags.headless ? "headless" : "api");
  if (Status st = ValidateServeFlags(flags); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 2;
  }
  LogIneffectiveFlags(flags);
  // The engine cores' ipc sockets go in $VLLM_RPC_BASE_PATH, $TMPDIR or /tmp: refused at once
  // if unusable (a bind there would fail later with zmq's errno alone).
  if (Status st = ipc::CheckIpcDirectory(); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 2;
  }
  // ipc socket files of `tandem serve` processes that crashed or were killed (SIGKILL leaves
  // them): removed here, so the directory does not fill with them.
  const std::string ipc_directory = ipc::IpcDirectory();
  if (const int32_t stale = ipc::RemoveStaleIpcFiles(ipc_directory); stale > 0) {
    TLOG_INFO("removed {} ipc socket file(s) in {} left by tandem processes that are gone", stale,
              ipc_directory);
  }
  // The engine processes (children, which read it when libgomp loads) wait at a forward-pass
  // barrier by spinning ~3000 rounds, then sleeping, unless the user chose a policy. libgomp's
  // default spin made a busy neighbour on one of two cores cost ~4x decode time (the waiting
  // thread spins through the slice the descheduled one needs); 3000 costs ~2x, the CPU share,
  // with no loss when idle (docs/benchmarks.md, "busy neighbour").
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("GOMP_SPINCOUNT", "3000", /*overwrite=*/0);
  }
  auto files = InspectModelFiles(flags.model, flags.tokenizer);
  if (!files.ok()) {
    TLOG_ERROR("{}", files.status().message());
    return 1;
  }
  auto max_model_len = ResolveMaxModelLen(flags.max_model_len, *files);
  if (!max_model_len.ok()) {
    TLOG_ERROR("{}", max_model_len.status().message());
    return 2;
  }
  const EngineCoreConfig engine_cfg = MakeEngineConfig(flags, *max_model_len, files->eos_token_ids);
  TLOG_INFO(
      "max_model_len {}, max_num_seqs {}, max_num_batched_tokens {}, block_size {}, "
      "prefix caching {}",
      engine_cfg.max_model_len, engine_cfg.max_num_seqs, engine_cfg.max_num_batched_tokens,
      engine_cfg.block_size, engine_cfg.enable_prefix_caching ? "on" : "off");
  // vLLM's words: V1 always chunks prefills (--no-enable-chunked-prefill is logged as ignored).
  TLOG_INFO("Chunked prefill is enabled with max_num_batched_tokens={}.",
            engine_cfg.max_num_batched_tokens);
  if (flags.headless) {
    return RunHeadless(flags, engine_cfg);
  }
  if (LocalRanksOnly(flags) && flags.data_parallel_start_rank > 0) {
    return RunDataParallelApiMachine(flags, engine_cfg, ServeArgs(argc, argv));
  }
  if (flags.data_parallel_size == 1 && flags.api_server_count == 1) {
    return RunSingleRankHead(flags, engine_cfg);
  }
  return RunDataParallelHead(flags, engine_cfg, ServeArgs(argc, argv));
}

}  // namespace tandem::apps
