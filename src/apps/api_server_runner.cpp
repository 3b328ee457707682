#include "apps/api_server_runner.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <set>
#include <sstream>
#include <thread>

#include "apps/engine_launcher.h"
#include "apps/model_files.h"
#include "core/logging.h"
#include "core/utf8.h"
#include "server/metrics.h"
#include "server/metrics_share.h"
#include "server/openai/request_parsing.h"
#include "server/preprocess_pool.h"

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

Result<server::ServerConfig> MakeServerConfig(const ServeFlags& f, const ModelFiles& files,
                                              int max_model_len) {
  server::ServerConfig c;
  c.num_preprocess_threads = server::PreprocessPool::DefaultThreads();
  c.host = f.host;
  c.port = static_cast<uint16_t>(f.port);
  c.served_model_names = f.served_model_names;
  if (c.served_model_names.empty()) c.served_model_names.push_back(f.model);
  c.model_root = f.model;
  if (!f.api_key.empty()) c.api_keys.push_back(f.api_key);
  c.enable_ui = f.ui;
  c.root_path = f.root_path;
  c.tls = TlsOptionsFromFlags(f);
  c.enable_server_load_tracking = f.enable_server_load_tracking;
  c.enable_request_id_headers = f.enable_request_id_headers;
  c.enable_log_requests = f.enable_log_requests;
  c.max_log_len = f.max_log_len;
  c.enable_prompt_tokens_details = f.enable_prompt_tokens_details;
  TANDEM_ASSIGN_OR_RETURN(c.cors.allowed_origins,
                          ParseStringList("--allowed-origins", f.allowed_origins));
  TANDEM_ASSIGN_OR_RETURN(c.cors.allowed_methods,
                          ParseStringList("--allowed-methods", f.allowed_methods));
  TANDEM_ASSIGN_OR_RETURN(c.cors.allowed_headers,
                          ParseStringList("--allowed-headers", f.allowed_headers));
  c.cors.allow_credentials = f.allow_credentials;
  c.disable_access_log_for_endpoints = SplitCommaList(f.disable_access_log_for_endpoints);
  c.max_model_len = max_model_len;
  c.max_logprobs = f.max_logprobs;
  c.priority_scheduling = f.scheduling_policy == "priority";
  c.eos_token_ids = files.eos_token_ids;
  if (!f.chat_template.empty()) {
    TANDEM_ASSIGN_OR_RETURN(std::string source, ReadTextFile(f.chat_template, "--chat-template"));
    c.chat_template = std::move(source);
  } else if (!files.chat_template.empty()) {
    c.chat_template = files.chat_template;
  }
  c.max_chat_messages = f.max_chat_messages;
  c.max_chat_tools = f.max_chat_tools;
  c.chat_template_limits.max_recursion_depth = f.chat_template_max_recursion;
  c.chat_template_limits.max_loop_iterations = f.chat_template_max_loop_iterations;
  c.chat_template_limits.max_output_bytes = f.chat_template_max_output_bytes;
  c.chat_template_limits.max_live_bytes = 4 * f.chat_template_max_output_bytes;
  c.chat_template_limits.timeout_s = f.chat_template_timeout;
  c.stalled_client_timeout_s = f.stalled_client_timeout;
  c.limit_concurrency = f.limit_concurrency;
  c.reasoning_parser = f.reasoning_parser;
  c.reasoning_field = f.reasoning_field;
  c.enable_auto_tool_choice = f.enable_auto_tool_choice;
  c.trust_request_chat_template = f.trust_request_chat_template;
  c.tool_call_parser = f.tool_call_parser;
  if (!f.default_chat_template_kwargs.empty()) {
    c.default_chat_template_kwargs =
        server::openai::ParseOrderedOrDiscarded(f.default_chat_template_kwargs);
    if (!c.default_chat_template_kwargs.is_object()) {
      return InvalidArgument("--default-chat-template-kwargs must be a JSON object, got '" +
                             f.default_chat_template_kwargs + "'");
    }
  }
  TANDEM_RETURN_IF_ERROR(
      ApplyGenerationConfig(f.generation_config, f.override_generation_config, files, &c));
  TANDEM_RETURN_IF_ERROR(c.Validate());
  return c;
}

}  // namespace

bool ParseServeFlags(int argc, char** argv, ServeFlags* flags, int* exit_code) {
  CLI::App app("tandem serve: serve a model over an OpenAI-compatible API", "tandem serve");
  app.get_formatter()->column_width(44);
  DeclareServeFlags(app, *flags);
  auto expanded = ExpandConfigFile(NormalizeFlagSpellings(argc, argv), &flags->config_file);
  if (!expanded.ok()) {
    std::fprintf(stderr, "%s\n", expanded.status().message().c_str());
    *exit_code = 2;
    return false;
  }
  std::vector<std::string> args = std::move(expanded).value();
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);  // CLI11: reversed, no argv0
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    const int cli_code = app.exit(e);
    // --help / --version exit 0; every usage error exits 2, as vLLM's argparse does (CLI11's
    // own codes differ by kind of error).
    *exit_code = cli_code == 0 ? 0 : 2;
    if (cli_code != 0) {
      const std::string what = e.what();
      for (const std::string& name : flags->config_file.flags_taken) {
        if (what.find("--" + name) != std::string::npos) {
          std::fprintf(stderr, "(--%s came from --config '%s')\n", name.c_str(),
                       flags->config_file.path.c_str());
        }
      }
    }
    return false;
  }
  // Every value is text the API shows or passes on as JSON, which holds UTF-8 only.
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& value : option->results()) {
      if (!IsValidUtf8(value)) {
        // Not echoed: the value may be a secret (--api-key).
        std::fprintf(stderr, "%s: the value is not valid UTF-8\n", option->get_name().c_str());
        *exit_code = 2;
        return false;
      }
    }
  }
  // Asked for, not just the default: a model that cannot cache prefixes then refuses to start.
  flags->enable_prefix_caching_given =
      flags->enable_prefix_caching && app.count("--enable-prefix-caching") > 0;
  // Given on the command line, in --config or by env var: the start-up log names each.
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() > 0) flags->given_flags.push_back(option->get_single_name());
  }
  return true;
}

Result<ApiServerParts> BuildApiServer(const ServeFlags& flags,
                                      const router::MpEngineClientOptions& client_options,
                                      bool reuse_port) {
  TANDEM_ASSIGN_OR_RETURN(ModelFiles files, InspectModelFiles(flags.model, flags.tokenizer));
  TANDEM_ASSIGN_OR_RETURN(int max_model_len, ResolveMaxModelLen(flags.max_model_len, files));
  TANDEM_ASSIGN_OR_RETURN(std::shared_ptr<const text::Tokenizer> tokenizer, LoadTokenizer(files));
  TANDEM_ASSIGN_OR_RETURN(server::ServerConfig config,
                          MakeServerConfig(flags, files, max_model_len));
  config.reuse_port = reuse_port;
  ApiServerParts parts;
  parts.max_model_len = max_model_len;
  parts.engines_lost = std::make_shared<EnginesLost>();
  router::MpEngineClientOptions options = client_options;
  if (LocalRanksOnly(flags)) {  // hybrid / external DP load balancing: our machine's ranks
    options.first_served_rank = flags.data_parallel_start_rank;
    options.num_served_ranks = flags.data_parallel_size_local;
  }
  options.on_all_ranks_lost = [lost = parts.engines_lost](const std::string& reason) {
    TLOG_ERROR(
        "no engine core is left ({}); answering the requests in flight, then exiting so "
        "that a supervisor can restart the server",
        reason);
    lost->lost = true;
    if (server::HttpServer* http = lost->http.load()) http->StopWhenIdle(/*max_wait_s=*/10);
  };
  parts.client = std::make_shared<router::MpEngineClient>(options);
  parts.http = std::make_unique<server::HttpServer>(config, parts.client, tokenizer);
  parts.engines_lost->http = parts.http.get();
  return parts;
}

Result<ApiServerParts> StartDataParallelApiServer(const ServeFlags& flags,
                                                  const std::string& output_endpoint,
                                                  const std::string& publish_endpoint) {
  router::MpEngineClientOptions options;
  options.output_endpoint = output_endpoint;
  options.snapshot_endpoint = publish_endpoint;
  options.dp_size = flags.data_parallel_size;
  options.num_api_servers = flags.api_server_count;
  router::ParseLoadBalancePolicy(flags.data_parallel_load_balancer, &options.policy);
  TANDEM_ASSIGN_OR_RETURN(
      ApiServerParts parts,
      BuildApiServer(flags, options, /*reuse_port=*/flags.api_server_count > 1));
  TANDEM_RETURN_IF_ERROR(parts.client->Start());
  TANDEM_RETURN_IF_ERROR(parts.http->Start());
  return parts;
}

int RunApiServerCommand(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "_api-server: internal subcommand of `tandem serve`\n");
    return 2;
  }
  // Before any thread exists, so that every thread inherits the mask: a thread that does not
  // block SIGTERM would take its default action and skip the clean shutdown below.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  router::MpEngineClientOptions options;
  options.client_index = std::atoi(argv[1]);
  options.output_endpoint = argv[2];
  options.snapshot_endpoint = argv[3];
  options.shutdown_engines = false;  // API server 0 (the head) owns the engines' lifetime
  ServeFlags flags;
  int exit_code = 0;
  // argv[3] stands in for the program name of the serve flags that follow.
  if (!ParseServeFlags(argc - 3, argv + 3, &flags, &exit_code)) return exit_code;
  InitLogging("api" + std::to_string(options.client_index));
  ExitWithParent();  // never outlive the process that started us
  if (Status st = ValidateServeFlags(flags); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 2;
  }
  options.dp_size = flags.data_parallel_size;
  options.num_api_servers = flags.api_server_count;
  auto share = server::MetricsShare::Open(server::MetricsShareName(getppid()),
                                          flags.api_server_count, flags.data_parallel_size);
  if (share.ok()) {
    server::Metrics::Global().ShareVia(std::move(share).value(), options.client_index);
  } else {
    TLOG_WARN("{}; /metrics answered by this API server shows its own request counters only",
              share.status().message());
  }
  router::ParseLoadBalancePolicy(flags.data_parallel_load_balancer, &options.policy);
  auto parts = BuildApiServer(flags, options, /*reuse_port=*/true);
  if (!parts.ok()) {
    TLOG_ERROR("{}", parts.status().message());
    return 1;
  }
  if (Status st = parts->client->Start(); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  // Listen only once every DP rank is ready: the port is shared (SO_REUSEPORT), and a
  // connection the kernel hands to a server still starting would get a 503 while API server 0
  // already serves. The head bounds the start-up (and takes this process down with it).
  parts->client->WaitReady(/*timeout_s=*/1e9);
  if (Status st = parts->http->Start(); !st.ok()) {
    TLOG_ERROR("{}", st.message());
    return 1;
  }
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    // The head stops us: answer what is in flight first, as the head does (--shutdown-timeout;
    // the head kills us past its own wait).
    parts->http->StopWhenIdle(flags.shutdown_timeout);
  });
  signals.detach();
  parts->http->Run();
  parts->client->Shutdown();
  return parts->engines_lost->lost ? 1 : 0;
}

}  // namespace tandem::apps
