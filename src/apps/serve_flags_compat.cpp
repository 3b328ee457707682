// vLLM's serve flags that tandem keeps so that vLLM launch scripts and configs run unchanged.
// Each is honoured, logged once as having no effect here (saying why), or refused by name
// where tandem has not built the feature. Sources: vLLM's `vllm serve --help` and its
// engine/arg_utils.py (flag names, defaults, human-readable ints). --config YAML:
// serve_config_file.cpp.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "apps/serve_flag_helpers.h"
#include "apps/serve_flags.h"
#include "core/logging.h"
#include "http/tls.h"

namespace tandem::apps {

void DeclareCompatFlags(CLI::App& app, ServeFlags& f) {
  Opt(app, "root-path", f.root_path,
      "Path prefix a proxy adds (e.g. /llm): stripped from request paths that start with it");
  Opt(app, "override-generation-config", f.override_generation_config,
      "JSON object of default sampling fields (temperature, top_p, top_k, repetition_penalty) "
      "over --generation-config's; a request's own fields still win");
  Flag(app, "enable-chunked-prefill", f.enable_chunked_prefill,
       "Always on: long prompts are prefilled in chunks of --max-num-batched-tokens (as vLLM V1)");
  Opt(app, "pipeline-parallel-size", f.pipeline_parallel_size,
      "Pipeline stages: only 1 (use --tensor-parallel-size / --data-parallel-size)")
      ->check(IntRange(1, kMaxProcessesPerFlag));
  Opt(app, "swap-space", f.swap_space, "GiB of CPU swap for the KV cache: no effect on CPU")
      ->check(NumberRange(0, 1 << 20));
  Opt(app, "cpu-offload-gb", f.cpu_offload_gb, "GiB of weights offloaded to CPU: no effect on CPU")
      ->check(NumberRange(0, 1 << 20));
  Flag(app, "disable-log-stats", f.disable_log_stats,
       "Accepted: tandem logs no periodic stats (they are at /metrics)");
  Opt(app, "uvicorn-log-level", f.uvicorn_log_level,
      "Accepted, no effect: tandem's HTTP server is not uvicorn");
  Opt(app, "scheduling-policy", f.scheduling_policy,
      "fcfs (first come, first served) or priority (each request's `priority`, lower first; "
      "then arrival; the least important running request is preempted first)")
      ->check(CLI::IsMember({"fcfs", "priority"}));
  Opt(app, "distributed-executor-backend", f.distributed_executor_backend,
      "mp | uni: tandem runs its ranks as processes; ray and external_launcher are not built");
  Opt(app, "data-parallel-backend", f.data_parallel_backend,
      "mp (processes, tandem's); ray is not built");
  Flag(app, "data-parallel-hybrid-lb", f.data_parallel_hybrid_lb,
       "Every machine runs API servers that balance only its own DP ranks (--data-parallel-"
       "start-rank, --data-parallel-size-local); a load balancer in front spreads requests "
       "over the machines");
  Flag(app, "data-parallel-external-lb", f.data_parallel_external_lb,
       "One API deployment per DP rank (the rank is --data-parallel-start-rank); a load "
       "balancer in front spreads requests over them");
  Opt(app, "data-parallel-rank", f.data_parallel_rank,
      "This deployment's one DP rank: external load balancing (--data-parallel-external-lb)")
      ->check(IntRange(-1, kMaxDataParallelSize - 1));
  Flag(app, "enable-server-load-tracking", f.enable_server_load_tracking,
       "GET /load answers {\"server_load\": N}, the generation requests this API server holds "
       "(0 without this flag)");
  Flag(app, "enable-request-id-headers", f.enable_request_id_headers,
       "Every response carries X-Request-Id: the request's own, else a new random one");
  Opt(app, "allowed-origins", f.allowed_origins,
      "CORS: origins allowed to call from a browser, a JSON list (\"*\" = any)");
  Opt(app, "allowed-methods", f.allowed_methods, "CORS: methods allowed, a JSON list");
  Opt(app, "allowed-headers", f.allowed_headers, "CORS: request headers allowed, a JSON list");
  Flag(app, "allow-credentials", f.allow_credentials,
       "CORS: allow cookies and Authorization (the origin is echoed instead of *)");
  Opt(app, "ssl-keyfile", f.ssl_keyfile, "HTTPS: the server's PEM private key (unencrypted)");
  Opt(app, "ssl-certfile", f.ssl_certfile, "HTTPS: the server's PEM certificate chain");
  Opt(app, "ssl-ca-certs", f.ssl_ca_certs, "HTTPS: PEM CAs that sign client certificates");
  Opt(app, "ssl-cert-reqs", f.ssl_cert_reqs,
      "HTTPS client certificates: 0 not asked for, 1 optional, 2 required (needs --ssl-ca-certs)")
      ->check(IntRange(0, 2));
  Opt(app, "ssl-ciphers", f.ssl_ciphers, "HTTPS: OpenSSL cipher list for TLS 1.2");
  Flag(app, "enable-ssl-refresh", f.enable_ssl_refresh,
       "HTTPS: reload the key, certificate and CAs when their files change");
}

http::TlsOptions TlsOptionsFromFlags(const ServeFlags& f) {
  http::TlsOptions tls;
  tls.keyfile = f.ssl_keyfile;
  tls.certfile = f.ssl_certfile;
  tls.ca_certs = f.ssl_ca_certs;
  tls.cert_reqs = static_cast<http::ClientCertPolicy>(f.ssl_cert_reqs);
  tls.ciphers = f.ssl_ciphers;
  tls.refresh = f.enable_ssl_refresh;
  return tls;
}

Status ValidateCompatFlags(const ServeFlags& f) {
  if (f.pipeline_parallel_size != 1) {
    return InvalidArgument(
        "--pipeline-parallel-size " + std::to_string(f.pipeline_parallel_size) +
        ": pipeline parallelism is not built; split the model with --tensor-parallel-size and "
        "replicate it with --data-parallel-size");
  }
  const std::string& executor = f.distributed_executor_backend;
  if (!executor.empty() && executor != "mp" && executor != "uni") {
    return InvalidArgument("--distributed-executor-backend " + executor +
                           " is not built: tandem runs no Ray; its ranks are processes (mp), "
                           "across machines with --data-parallel-address and --headless");
  }
  if (f.data_parallel_backend != "mp") {
    return InvalidArgument("--data-parallel-backend " + f.data_parallel_backend +
                           " is not built: tandem's DP ranks are processes (mp)");
  }
  if (const http::TlsOptions tls = TlsOptionsFromFlags(f); tls.enabled()) {
    // Loaded here too, so that a bad file stops start-up before the model loads.
    TANDEM_RETURN_IF_ERROR(http::MakeServerTlsContext(tls).status());
  } else if (!f.ssl_ca_certs.empty() || f.ssl_cert_reqs != 0 || !f.ssl_ciphers.empty() ||
             f.enable_ssl_refresh) {
    return InvalidArgument(
        "--ssl-ca-certs, --ssl-cert-reqs, --ssl-ciphers and "
        "--enable-ssl-refresh need --ssl-keyfile and --ssl-certfile (HTTPS)");
  }
  for (const auto& [flag, value] : {std::pair{"--allowed-origins", &f.allowed_origins},
                                    std::pair{"--allowed-methods", &f.allowed_methods},
                                    std::pair{"--allowed-headers", &f.allowed_headers}}) {
    TANDEM_RETURN_IF_ERROR(ParseStringList(flag, *value).status());
  }
  if (!f.override_generation_config.empty()) {
    bool object = false;
    try {
      object = nlohmann::json::parse(f.override_generation_config).is_object();
    } catch (const nlohmann::json::exception&) {
    }
    if (!object) {
      return InvalidArgument("--override-generation-config must be a JSON object, got '" +
                             f.override_generation_config + "'");
    }
  }
  if (!f.root_path.empty() && (f.root_path[0] != '/' || f.root_path.back() == '/')) {
    return InvalidArgument("--root-path '" + f.root_path +
                           "' must start with '/' and not end with one, e.g. /llm");
  }
  return Status::Ok();
}

namespace {

// Whether the command line (or --config, or an env var) gave the flag `name` (no "--").
bool Given(const ServeFlags& f, const std::string& name) {
  return std::find(f.given_flags.begin(), f.given_flags.end(), name) != f.given_flags.end();
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

void LogCompatFlags(const ServeFlags& f) {
  if (!f.enable_chunked_prefill) {
    TLOG_INFO(
        "--no-enable-chunked-prefill accepted; no effect: long prompts are always "
        "prefilled in chunks of --max-num-batched-tokens (as in vLLM V1)");
  }
  if (f.swap_space) {
    TLOG_INFO(
        "--swap-space accepted; it has no effect on CPU (the KV cache is in host memory "
        "already; a preempted request recomputes)");
  }
  if (f.cpu_offload_gb) {
    TLOG_INFO(
        "--cpu-offload-gb accepted; it has no effect on CPU (the weights are in host "
        "memory already)");
  }
  if (f.disable_log_stats) {
    TLOG_INFO("--disable-log-stats accepted; tandem logs no periodic stats (see /metrics)");
  }
  if (f.disable_log_requests) {
    TLOG_INFO(
        "--disable-log-requests accepted; no effect: requests are logged only with "
        "--enable-log-requests{}",
        f.enable_log_requests ? ", which is given and wins" : " (not given)");
  }
  if (f.uvicorn_log_level) {
    TLOG_INFO(
        "--uvicorn-log-level {} accepted; no effect (tandem's HTTP server is not uvicorn; "
        "--disable-access-log-for-endpoints quiets its access log)",
        *f.uvicorn_log_level);
  }
  if (!f.distributed_executor_backend.empty()) {
    TLOG_INFO("--distributed-executor-backend {} accepted: tandem runs its ranks as processes",
              f.distributed_executor_backend);
  }
  if (!f.root_path.empty()) {
    TLOG_INFO("--root-path {}: requests under it are served as if it were absent", f.root_path);
  }
  // One DP rank and one API server run without the DP handshake (RunSingleRankHead): nothing
  // binds or dials the head's address and port then.
  if (!f.headless && f.data_parallel_size == 1 && f.api_server_count == 1) {
    for (const auto& [name, value] :
         {std::pair{"data-parallel-address", f.data_parallel_address},
          std::pair{"data-parallel-rpc-port", std::to_string(f.data_parallel_rpc_port)}}) {
      if (Given(f, name)) {
        TLOG_INFO(
            "--{} {} accepted; no effect with one DP rank and one API server (no other "
            "machine joins, so no DP handshake runs)",
            name, value);
      }
    }
  }
}

void LogAppliedFlags(const ServeFlags& f) {
  if (Given(f, "pipeline-parallel-size")) {
    TLOG_INFO(
        "--pipeline-parallel-size {}: one pipeline stage, every rank holds all layers "
        "(tandem splits a model with --tensor-parallel-size)",
        f.pipeline_parallel_size);
  }
  if (Given(f, "scheduling-policy")) {
    TLOG_INFO("--scheduling-policy {}: {}", f.scheduling_policy,
              f.scheduling_policy == "priority"
                  ? "waiting requests are admitted by their priority field (lower first), then "
                    "arrival; the running request with the largest priority is preempted first"
                  : "requests are scheduled first come, first served");
  }
  if (Given(f, "data-parallel-backend")) {
    TLOG_INFO("--data-parallel-backend {}: DP ranks run as processes", f.data_parallel_backend);
  }
  if (LocalRanksOnly(f)) {
    const char* mode = f.data_parallel_hybrid_lb   ? "--data-parallel-hybrid-lb"
                       : f.data_parallel_rank >= 0 ? "--data-parallel-rank"
                                                   : "--data-parallel-external-lb";
    const int first = f.data_parallel_start_rank;
    const int last = first + f.data_parallel_size_local - 1;
    if (f.data_parallel_size == 1) {
      TLOG_INFO("{} accepted; no effect with one DP rank (its API servers serve it)", mode);
    } else {
      TLOG_INFO("{}: this machine's API server(s) serve only DP rank(s) {}..{} of {}; {}", mode,
                first, last, f.data_parallel_size,
                first == 0 ? "this machine is the head (handshake and coordinator)"
                           : "the head at --data-parallel-address runs the coordinator");
    }
  }
  if (const int local = f.data_parallel_size_local; Given(f, "data-parallel-size-local")) {
    if (local == 0) {
      TLOG_INFO(
          "--data-parallel-size-local 0: none of the {} DP ranks runs on this machine; "
          "it serves the API",
          f.data_parallel_size);
    } else {
      TLOG_INFO("--data-parallel-size-local {}: DP rank(s) {}..{} of {} run on this machine", local,
                f.data_parallel_start_rank, f.data_parallel_start_rank + local - 1,
                f.data_parallel_size);
    }
  }
  if (f.enable_log_requests) {
    TLOG_INFO(
        "--enable-log-requests: each request is logged as it reaches the engine, its id "
        "and sampling parameters at INFO, its prompt and prompt token ids at DEBUG "
        "(TANDEM_LOG_LEVEL=debug; --max-log-len {})",
        f.max_log_len < 0 ? std::string("-1: all of them") : std::to_string(f.max_log_len));
  }
  if (f.enable_prompt_tokens_details) {
    TLOG_INFO(
        "--enable-prompt-tokens-details: usage.prompt_tokens_details.cached_tokens counts "
        "the prompt tokens served from the prefix cache");
  }
  if (f.enable_server_load_tracking) {
    TLOG_INFO(
        "--enable-server-load-tracking: GET /load counts the generation requests this API "
        "server holds");
  }
  if (f.enable_request_id_headers) {
    TLOG_INFO(
        "--enable-request-id-headers: responses carry X-Request-Id, the request's own or "
        "else a new random one");
  }
  if (Given(f, "allowed-origins") || Given(f, "allowed-methods") || Given(f, "allowed-headers") ||
      Given(f, "allow-credentials")) {
    TLOG_INFO(
        "CORS: --allowed-origins {}, --allowed-methods {}, --allowed-headers {}, "
        "--allow-credentials {} (a browser's preflight outside these gets a 400)",
        f.allowed_origins, f.allowed_methods, f.allowed_headers,
        f.allow_credentials ? "on: the origin is echoed instead of *" : "off");
  }
  if (const ServeFlags::ConfigFileUse& config = f.config_file; !config.path.empty()) {
    TLOG_INFO("--config {}: took {} from the file{}", config.path,
              config.flags_taken.empty() ? std::string("no flag") : Joined(config.flags_taken),
              config.flags_overridden.empty()
                  ? ""
                  : "; the command line's " + Joined(config.flags_overridden) + " won");
  }
}

Result<std::vector<std::string>> ParseStringList(const std::string& flag,
                                                 const std::string& value) {
  nlohmann::json list;
  try {
    list = nlohmann::json::parse(value);
  } catch (const nlohmann::json::exception&) {
  }
  if (!list.is_array() || !std::all_of(list.begin(), list.end(),
                                       [](const nlohmann::json& v) { return v.is_string(); })) {
    return InvalidArgument(flag +
                           " must be a JSON list of strings, e.g. '[\"http://a.example\"]', "
                           "got '" +
                           value + "'");
  }
  return list.get<std::vector<std::string>>();
}

Result<int64_t> ParseHumanReadableInt(const std::string& flag, const std::string& value) {
  const auto bad = [&] {
    return InvalidArgument("--" + flag + " '" + value +
                           "' is not an integer (a k/m/g/t suffix multiplies by 1000s, K/M/G/T "
                           "by 1024s: 32k = 32000, 32K = 32768)");
  };
  // Exact: digits (and for a lowercase suffix a fraction) times a power of 1000 or 1024, in
  // 128-bit integers, so 2.01k is 2010 and overflow is caught.
  size_t begin = value.find_first_not_of(' ');
  if (begin == std::string::npos) return bad();
  std::string text = value.substr(begin, value.find_last_not_of(' ') + 1 - begin);
  static const std::string kDecimal = "kmgt", kBinary = "KMGT";
  __int128 scale = 1;
  bool fraction_ok = false;
  if (const size_t d = kDecimal.find(text.back()); d != std::string::npos) {
    for (size_t i = 0; i <= d; ++i) scale *= 1000;
    fraction_ok = true;
    text.pop_back();
  } else if (const size_t b = kBinary.find(text.back()); b != std::string::npos) {
    for (size_t i = 0; i <= b; ++i) scale *= 1024;
    text.pop_back();
  }
  bool negative = false;
  if (!text.empty() && text[0] == '-') {
    negative = true;
    text.erase(0, 1);
  }
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
  if ((dot != std::string::npos && !fraction_ok) || (whole.empty() && fraction.empty()) ||
      whole.size() + fraction.size() > 30) {
    return bad();
  }
  __int128 mantissa = 0, divisor = 1;
  for (char c : whole + fraction) {
    if (c < '0' || c > '9') return bad();
    mantissa = mantissa * 10 + (c - '0');
  }
  for (size_t i = 0; i < fraction.size(); ++i) divisor *= 10;
  const __int128 product = mantissa * scale;  // < 10^30 · 1024^4: fits in 128 bits
  if (product % divisor != 0) return bad();
  const __int128 result = product / divisor;
  if (result > static_cast<__int128>(std::numeric_limits<int64_t>::max())) return bad();
  return static_cast<int64_t>(negative ? -result : result);
}

}  // namespace tandem::apps
