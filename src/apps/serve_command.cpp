#include "apps/serve_command.h"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <memory>
#include <sstream>
#include <thread>

#include "apps/engine_launcher.h"
#include "apps/model_files.h"
#include "apps/serve_flags.h"
#include "core/logging.h"
#include "ipc/zmq_socket.h"
#include "router/mp_engine_client.h"
#include "server/http_server.h"

namespace tandem::apps {
namespace {

std::set<std::string> SplitCommaList(const std::string& s) {
  std::set<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.insert(item);
  }
  return out;
}

// vLLM's default token budget with chunked prefill: 2048, but never below max_num_seqs.
int DefaultBatchedTokens(const ServeFlags& f) { return std::max(2048, f.max_num_seqs); }

EngineCoreConfig MakeEngineConfig(const ServeFlags& f, const ModelFiles& files,
                                  int max_model_len) {
  EngineCoreConfig c;
  if (!files.eos_token_ids.empty()) c.eos_token_id = files.eos_token_ids.front();
  c.model_path = f.model;
  c.dtype = f.dtype;
  c.num_threads = f.num_threads;
  c.max_model_len = max_model_len;
  c.max_num_seqs = f.max_num_seqs;
  c.max_num_batched_tokens =
      f.max_num_batched_tokens > 0 ? f.max_num_batched_tokens : DefaultBatchedTokens(f);
  c.block_size = f.block_size;
  c.enable_prefix_caching = f.enable_prefix_caching;
  c.gpu_memory_utilization = f.gpu_memory_utilization;
  c.kv_cache_memory_bytes = f.kv_cache_memory_bytes;
  c.seed = f.seed;
  c.input_endpoint = ipc::MakeIpcEndpoint("engine0-input");
  c.output_endpoint = ipc::MakeIpcEndpoint("engine0-output");
  return c;
}

// Resolves everything the API server needs from the model files. Errors name the file.
Result<server::ServerConfig> MakeServerConfig(const ServeFlags& f, const ModelFiles& files,
                                              int max_model_len) {
  server::ServerConfig c;
  c.host = f.host;
  c.port = static_cast<uint16_t>(f.port);
  c.served_model_names = f.served_model_names;
  if (c.served_model_names.empty()) c.served_model_names.push_back(f.model);
  c.model_root = f.model;
  if (!f.api_key.empty()) c.api_keys.push_back(f.api_key);
  c.disable_access_log_for_endpoints = SplitCommaList(f.disable_access_log_for_endpoints);
  c.max_model_len = max_model_len;
  c.max_logprobs = f.max_logprobs;
  c.eos_token_ids = files.eos_token_ids;
  if (!f.chat_template.empty()) {
    TANDEM_ASSIGN_OR_RETURN(std::string source, ReadTextFile(f.chat_template, "--chat-template"));
    c.chat_template = std::move(source);
  } else if (!files.chat_template.empty()) {
    c.chat_template = files.chat_template;
  }
  TANDEM_RETURN_IF_ERROR(ApplyGenerationConfig(f.generation_config, files, &c));
  TANDEM_RETURN_IF_ERROR(c.Validate());
  return c;
}

// Blocks SIGINT/SIGTERM (and SIGUSR1, used to wake it at exit) in every thread; one thread waits for them and calls `on_signal`.
std::thread StartSignalThread(std::function<void(int)> on_signal) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return std::thread([set, on_signal = std::move(on_signal)] {
    int sig = 0;
    sigwait(&set, &sig);
    on_signal(sig);
  });
}

}  // namespace

int RunServeCommand(int argc, char** argv) {
  ServeFlags flags;
  CLI::App app("tandem serve: serve a model over an OpenAI-compatible API", "tandem serve");
  app.get_formatter()->column_width(44);
  DeclareServeFlags(app, flags);
  std::vector<std::string> args = NormalizeFlagSpellings(argc, argv);
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);  // CLI11 wants reversed, no argv0
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  InitLogging("api");
  if (Status st = ValidateServeFlags(flags); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 2;
  }
  LogIneffectiveFlags(flags);

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
  auto tokenizer = LoadTokenizer(*files);
  if (!tokenizer.ok()) {
    TLOG_ERROR("{}", tokenizer.status().message());
    return 1;
  }
  auto server_cfg = MakeServerConfig(flags, *files, *max_model_len);
  if (!server_cfg.ok()) {
    TLOG_ERROR("{}", server_cfg.status().message());
    return 1;
  }
  const EngineCoreConfig engine_cfg = MakeEngineConfig(flags, *files, *max_model_len);
  TLOG_INFO("max_model_len {}, max_num_seqs {}, max_num_batched_tokens {}, block_size {}, "
            "prefix caching {}",
            engine_cfg.max_model_len, engine_cfg.max_num_seqs, engine_cfg.max_num_batched_tokens,
            engine_cfg.block_size, engine_cfg.enable_prefix_caching ? "on" : "off");

  router::MpEngineClientOptions client_opts;
  client_opts.input_endpoint = engine_cfg.input_endpoint;
  client_opts.output_endpoint = engine_cfg.output_endpoint;
  auto client = std::make_shared<router::MpEngineClient>(client_opts);
  if (Status st = client->Start(); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  server::HttpServer http(*server_cfg, client, *tokenizer);
  if (Status st = http.Start(); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  std::atomic<int> exit_code{0};
  std::atomic<bool> signalled{false};
  std::thread signals = StartSignalThread([&](int sig) {
    signalled = true;
    if (sig == SIGUSR1) return;  // our own wake-up at the end of serve
    TLOG_INFO("signal {}: shutting down", sig);
    http.Stop();
  });
  EngineLauncher launcher;
  Status launched = launcher.Launch(engine_cfg, [&](const std::string& what) {
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
  TLOG_INFO("API server listening on http://{}:{} (health is 503 until the model is loaded)",
            flags.host, flags.port);
  http.Run();  // until Stop()
  client->Shutdown();
  launcher.Stop();
  if (!signalled) pthread_kill(signals.native_handle(), SIGUSR1);  // wake the sigwait thread
  signals.join();
  return exit_code;
}

}  // namespace tandem::apps
