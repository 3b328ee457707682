#include "apps/serve_flags.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>

#include "apps/serve_flag_helpers.h"
#include "apps/speculative_flag.h"
#include "core/logging.h"
#include "core/resource_limits.h"
#include "kernels/backend.h"
#include "tensor/device.h"

namespace tandem::apps {

void DeclareServeFlags(CLI::App& app, ServeFlags& f) {
  app.add_option("model_tag", f.model, "GGUF file or Hugging Face folder to serve")
      ->envname("TANDEM_MODEL");
  Opt(app, "model", f.model, "Same as the positional model");
  // Read before CLI11 parses (ExpandConfigFile, which also refuses a second --config);
  // declared here so that --help lists it.
  app.add_option("--config", f.config_file.path,
                 "YAML file of flags (vLLM's --config): each key a flag name without '--', each "
                 "value its value; a flag also on the command line takes the command line's");
  Opt(app, "tokenizer", f.tokenizer, "Take the tokenizer from this file/folder instead");
  Opt(app, "dtype", f.dtype,
      "Weight dtype: auto (as stored: float32/float16/bfloat16/GGUF Q8_0) | float32 | float | "
      "bfloat16 | float16 | half (converted at load). Activations are float32")
      ->check(CLI::IsMember({"auto", "float32", "float", "bfloat16", "float16", "half"}));
  Opt(app, "kv-cache-dtype", f.kv_cache_dtype,
      "KV cache element type: auto (float32, the activations') | float32 | bfloat16 | float16 "
      "(half the bytes attention reads; K/V rounded to nearest even). fp8 is refused on CPU")
      ->check([](const std::string& v) -> std::string {
        if (v == "auto" || v == "float32" || v == "float" || v == "bfloat16" || v == "float16" ||
            v == "half") {
          return "";
        }
        if (v.rfind("fp8", 0) == 0) {
          return v + ": fp8 KV caches have no CPU kernel; use auto, bfloat16 or float16";
        }
        return "'" + v + "' is not one of auto, float32, bfloat16, float16, half";
      });
  Opt(app, "device", f.device,
      "Device the model runs on: auto (cuda when this build has CUDA and a GPU is visible, else "
      "cpu) | cpu | cuda (stops start-up with the reason when it cannot be had: this build has "
      "no CUDA backend yet)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  Opt(app, "quantization", f.quantization,
      "Quantization of the checkpoint: ascend (msModelSlim W8A8_DYNAMIC / W8A8) | "
      "compressed-tensors (int8 W8A8). Default: detected from the folder "
      "(quant_model_description.json or config.json quantization_config); a value the folder "
      "does not match stops start-up",
      ",-q")
      ->check(CLI::IsMember({"ascend", "compressed-tensors"}));
  Opt(app, "chat-template", f.chat_template, "Jinja chat template file (overrides the model's)");
  Opt(app, "generation-config", f.generation_config,
      "Default sampling from the model's generation_config.json: auto|vllm|PATH");
  Opt(app, "served-model-name", f.served_model_names,
      "Model name(s) the API accepts; the first is reported (default: the model path)");
  Flag(app, "trust-remote-code", f.trust_remote_code, "Accepted; no effect (no model code runs)");
  Opt(app, "reasoning-parser", f.reasoning_parser,
      "Split reasoning off the content (--reasoning-field names it): qwen3 (text inside "
      "<think>...</think>)")
      ->check(CLI::IsMember({"", "qwen3", "deepseek_r1"}));
  Opt(app, "reasoning-field", f.reasoning_field,
      "Name of the reasoning in messages and deltas: both (reasoning, as current vLLM, and "
      "reasoning_content, as older vLLM) | reasoning | reasoning_content")
      ->check(CLI::IsMember({"both", "reasoning", "reasoning_content"}));
  Flag(app, "enable-auto-tool-choice", f.enable_auto_tool_choice,
       "Let the model call tools (tool_choice auto); needs --tool-call-parser");
  Opt(app, "tool-call-parser", f.tool_call_parser,
      "How tool calls appear in the model's text: hermes (<tool_call>JSON) | qwen3_coder (XML)")
      ->check(CLI::IsMember({"", "hermes", "qwen3_coder"}));
  Flag(app, "trust-request-chat-template", f.trust_request_chat_template,
       "Let requests bring their own chat_template (otherwise such a request is a 400)");
  Opt(app, "default-chat-template-kwargs", f.default_chat_template_kwargs,
      "JSON object of chat template variables; a request's chat_template_kwargs override it");
  Opt(app, "max-chat-messages", f.max_chat_messages,
      "Messages per chat request at most (400 beyond)")
      ->check(IntRange(1, 1000000));
  Opt(app, "max-chat-tools", f.max_chat_tools, "Tools per chat request at most (400 beyond)")
      ->check(IntRange(1, 100000));
  Opt(app, "chat-template-max-recursion", f.chat_template_max_recursion,
      "Nested macro calls in one chat template render at most")
      ->check(IntRange(1, 10000));
  Opt(app, "chat-template-max-loop-iterations", f.chat_template_max_loop_iterations,
      "Loop iterations (all loops) and range() length in one chat template render at most")
      ->check(IntRange(1, std::numeric_limits<int64_t>::max()));
  Opt(app, "chat-template-max-output-bytes", f.chat_template_max_output_bytes,
      "Bytes of a rendered chat prompt, and of any value a render builds, at most")
      ->check(IntRange(1, int64_t{1} << 30));
  Opt(app, "chat-template-timeout", f.chat_template_timeout,
      "Seconds one chat template render may take at most (400 beyond)")
      ->check(NumberRange(0, 86400, /*min_exclusive=*/true));

  Opt(app, "stalled-client-timeout", f.stalled_client_timeout,
      "Seconds a client may leave over 1 MiB of a response unread before the response is "
      "aborted (its engine requests too); 16 MiB unread aborts at once")
      ->check(NumberRange(0.1, 86400));
  Opt(app, "limit-concurrency", f.limit_concurrency,
      "Open connections at most; a connection past it is answered 503 and closed (uvicorn's "
      "--limit-concurrency; 0: no limit)")
      ->check(IntRange(int64_t{0}, std::numeric_limits<int64_t>::max()));
  Opt(app, "shutdown-timeout", f.shutdown_timeout,
      "On SIGTERM/SIGINT: seconds the requests in flight may take to finish (new ones get "
      "503); those still open then are answered 503 or end their stream with an error event "
      "(vLLM's flag; 0: at once)")
      ->check(NumberRange(0, 86400));
  Opt(app, "host", f.host, "Address the HTTP server binds");
  Opt(app, "port", f.port, "HTTP port")->check(IntRange(1, 65535));
  app.add_option("--api-key", f.api_key,
                 "Require `Authorization: Bearer KEY` on /v1 routes (env TANDEM_API_KEY or "
                 "VLLM_API_KEY)")
      ->envname("TANDEM_API_KEY");
  Opt(app, "disable-access-log-for-endpoints", f.disable_access_log_for_endpoints,
      "Comma-separated paths not written to the access log, e.g. /health,/metrics,/ping");
  Flag(app, "disable-log-requests", f.disable_log_requests,
       "Accepted (vLLM's old switch): requests are logged only with --enable-log-requests");
  Flag(app, "enable-log-requests", f.enable_log_requests,
       "Log each request as it reaches the engine: its id and sampling parameters (INFO), its "
       "prompt and prompt token ids (DEBUG, TANDEM_LOG_LEVEL=debug)");
  Opt(app, "max-log-len", f.max_log_len,
      "Prompt characters and prompt token ids --enable-log-requests logs at most (-1 = all)")
      ->check(IntRange(-1, 1 << 30));
  Flag(app, "enable-prompt-tokens-details", f.enable_prompt_tokens_details,
       "usage.prompt_tokens_details = {\"cached_tokens\": N} (prompt tokens served from the "
       "prefix cache) in completions and chat responses; without it null, as vLLM");
  Flag(app, "ui", f.ui, "Serve the chat playground page at / (--no-ui: off)");
  Opt(app, "api-server-count", f.api_server_count,
      "HTTP front-end processes on one port (default: number of local DP ranks)")
      ->check(IntRange(-1, kMaxProcessesPerFlag));

  Opt(app, "max-model-len", f.max_model_len,
      "Prompt + output tokens per request at most (0 = the model's context length); 32k = "
      "32000, 32K = 32768")
      ->transform(HumanReadableInt("max-model-len"))
      ->check(IntRange(0, std::numeric_limits<int32_t>::max()));
  Opt(app, "max-num-seqs", f.max_num_seqs, "Running sequences per step at most")
      ->check(IntRange(1, 65536));
  Opt(app, "max-num-batched-tokens", f.max_num_batched_tokens,
      "Token budget per step; long prompts are prefilled in chunks (0 = auto); 8k = 8000")
      ->transform(HumanReadableInt("max-num-batched-tokens"))
      ->check(IntRange(0, std::numeric_limits<int32_t>::max()));
  Opt(app, "block-size", f.block_size, "Tokens per KV-cache block")
      ->check(IntRange(1, 128))
      ->check(CLI::IsMember({1, 2, 4, 8, 16, 32, 64, 128}));
  Flag(app, "enable-prefix-caching", f.enable_prefix_caching,
       "Reuse KV blocks of shared prompt prefixes");
  Opt(app, "gpu-memory-utilization", f.gpu_memory_utilization,
      "Share of the memory this process may use for weights + activations + KV cache (CPU: "
      "of available RAM)")
      ->check(NumberRange(0.01, 1.0));
  Opt(app, "kv-cache-memory-bytes", f.kv_cache_memory_bytes,
      "KV cache size in bytes of each engine process (16G = 16 GiB); overrides "
      "--gpu-memory-utilization; at most this machine's physical memory")
      ->transform(HumanReadableInt("kv-cache-memory-bytes"))
      ->check(IntRange(0, std::numeric_limits<int64_t>::max()));
  Opt(app, "seed", f.seed, "Engine seed for unseeded sampling")
      ->check(IntRange(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  Opt(app, "max-logprobs", f.max_logprobs,
      "Largest logprobs/top_logprobs/prompt_logprobs a request may ask; -1: no cap (a request's "
      "-1 then asks for the whole vocabulary), as vLLM")
      ->check(IntRange(-1, 1 << 20));
  Opt(app, "num-threads", f.num_threads,
      "CPU threads for the forward pass (0 = all cores). At most 1024: OpenMP threads beyond the "
      "CPUs only time-share them, and 100000 of them crashed the engine")
      ->check(IntRange(0, kMaxNumThreads));

  Opt(app, "tensor-parallel-size", f.tensor_parallel_size,
      "TP ranks (processes) per DP rank, each holding a shard of every layer (vLLM short form -tp)")
      ->check(IntRange(1, kMaxProcessesPerFlag));
  Opt(app, "data-parallel-size", f.data_parallel_size,
      "DP ranks in the whole deployment (vLLM short form -dp)")
      ->check(IntRange(1, kMaxDataParallelSize));
  Opt(app, "data-parallel-size-local", f.data_parallel_size_local,
      "DP ranks on this machine (-1 = all ranks from --data-parallel-start-rank on)")
      ->check(IntRange(-1, kMaxProcessesPerFlag));
  Opt(app, "data-parallel-start-rank", f.data_parallel_start_rank, "First DP rank of this machine")
      ->check(IntRange(0, kMaxDataParallelSize - 1));
  Opt(app, "data-parallel-address", f.data_parallel_address, "Head's address for the DP handshake");
  Opt(app, "data-parallel-rpc-port", f.data_parallel_rpc_port, "Head's DP handshake port")
      ->check(IntRange(1, 65535));
  Opt(app, "data-parallel-load-balancer", f.data_parallel_load_balancer,
      "How API servers pick a DP rank: least-loaded (the fewest tokens of work held: prompt + "
      "max_tokens of its unfinished requests) | round-robin")
      ->check(CLI::IsMember({"least-loaded", "round-robin"}));
  Flag(app, "headless", f.headless, "Run engine cores only, no API server");
  Flag(app, "enable-expert-parallel", f.enable_expert_parallel,
       "Split each MoE layer's experts over all DP x TP ranks (tokens travel by all-to-all); DP "
       "ranks then step together in waves");
  Opt(app, "speculative-config", f.speculative_config,
      "Speculative decoding (JSON, vLLM's fields): {\"method\": \"ngram\", "
      "\"num_speculative_tokens\": K, \"prompt_lookup_min\": N, \"prompt_lookup_max\": M}");

  Opt(app, "compilation-config", f.compilation_config,
      "Accelerator graph config (JSON); no effect on CPU");
  Opt(app, "additional-config", f.additional_config,
      "Platform-specific config (JSON object). On CPU: {\"enable_cpu_binding\": true} pins each "
      "TP/DP rank's threads to its own cores; {\"profile_steps\": N} logs where every N engine "
      "steps' time went (matmul, attention, norms, collectives, sampling, ...); "
      "{\"q8_0_dot\": \"int8\"|\"float32\"} picks how "
      "GGUF Q8_0 weights multiply: int8 (default on AVX-512 VNNI CPUs: activations quantized to "
      "Q8_0 per block of 32, llama.cpp's arithmetic) or float32 (exact widening, f32 "
      "activations); other keys are logged as having no effect");
  Flag(app, "async-scheduling", f.async_scheduling,
       "Overlap scheduling with compute; no effect yet");
  Flag(app, "enforce-eager", f.enforce_eager, "Accepted; no effect on CPU");
  DeclareCompatFlags(app, f);
}

static Status CheckJson(const std::string& flag, const std::string& value) {
  if (value.empty()) return Status::Ok();
  bool valid = false;
  try {
    valid = nlohmann::json::accept(value);
  } catch (const nlohmann::json::exception&) {  // e.g. a number beyond double range
  }
  if (!valid) {
    return InvalidArgument("--" + flag + " must be a JSON object, got '" + value + "'");
  }
  return Status::Ok();
}

// --data-parallel-rank / --data-parallel-external-lb / --data-parallel-hybrid-lb as vLLM
// takes them (docs/design/dp-load-balancing-modes.md): -dpn R is external mode with the one
// rank R; external mode serves one rank per machine.
static Status ResolveLoadBalancingMode(ServeFlags& f) {
  if (f.data_parallel_hybrid_lb && (f.data_parallel_external_lb || f.data_parallel_rank >= 0)) {
    return InvalidArgument(
        "--data-parallel-hybrid-lb and --data-parallel-external-lb / "
        "--data-parallel-rank are two load-balancing modes; choose one");
  }
  if (f.data_parallel_rank >= f.data_parallel_size) {
    return InvalidArgument("--data-parallel-rank " + std::to_string(f.data_parallel_rank) +
                           " must be in [0, --data-parallel-size " +
                           std::to_string(f.data_parallel_size) + ")");
  }
  if (f.data_parallel_rank >= 0) {
    // An explicit start rank 0 (-dpr 0) counts as given, not as the default.
    const bool start_rank_given = std::find(f.given_flags.begin(), f.given_flags.end(),
                                            "data-parallel-start-rank") != f.given_flags.end();
    if ((f.data_parallel_start_rank != 0 || start_rank_given) &&
        f.data_parallel_start_rank != f.data_parallel_rank) {
      return InvalidArgument("--data-parallel-rank " + std::to_string(f.data_parallel_rank) +
                             " and --data-parallel-start-rank " +
                             std::to_string(f.data_parallel_start_rank) +
                             " disagree; give only --data-parallel-rank");
    }
    f.data_parallel_external_lb = true;
    f.data_parallel_start_rank = f.data_parallel_rank;
  }
  if (!LocalRanksOnly(f)) return Status::Ok();
  const char* mode =
      f.data_parallel_external_lb
          ? (f.data_parallel_rank >= 0 ? "--data-parallel-rank" : "--data-parallel-external-lb")
          : "--data-parallel-hybrid-lb";
  if (f.headless) {
    return InvalidArgument(std::string(mode) +
                           " runs this machine's own API servers; it "
                           "cannot be --headless (drop one of them)");
  }
  if (f.data_parallel_external_lb) {
    if (f.data_parallel_size_local >= 0 && f.data_parallel_size_local != 1) {
      return InvalidArgument(std::string(mode) +
                             " serves one DP rank per API deployment; "
                             "--data-parallel-size-local " +
                             std::to_string(f.data_parallel_size_local) +
                             " must be 1 (or use --data-parallel-hybrid-lb for several)");
    }
    f.data_parallel_size_local = 1;
  }
  if (f.data_parallel_size_local == 0) {
    return InvalidArgument(std::string(mode) +
                           " needs at least one local DP rank: this "
                           "machine's API servers serve only its own ranks");
  }
  if (f.data_parallel_start_rank > 0 && f.data_parallel_address.empty()) {
    return InvalidArgument(std::string(mode) + " with DP rank(s) from " +
                           std::to_string(f.data_parallel_start_rank) +
                           " needs --data-parallel-address: the head's (rank 0's) address");
  }
  return Status::Ok();
}

// --data-parallel-*, --headless and --api-server-count together (vLLM's rules).
static Status ValidateDataParallelFlags(ServeFlags& f) {
  auto flag = [](const char* name, int v) {
    return std::string("--") + name + " " + std::to_string(v);
  };
  if (f.data_parallel_size < 1) {
    return InvalidArgument(flag("data-parallel-size", f.data_parallel_size) + " must be >= 1");
  }
  TANDEM_RETURN_IF_ERROR(ResolveLoadBalancingMode(f));
  if (f.data_parallel_start_rank < 0 || f.data_parallel_start_rank >= f.data_parallel_size) {
    return InvalidArgument(flag("data-parallel-start-rank", f.data_parallel_start_rank) +
                           " must be in [0, --data-parallel-size " +
                           std::to_string(f.data_parallel_size) + ")");
  }
  if (f.data_parallel_size_local < 0) {
    f.data_parallel_size_local = f.data_parallel_size - f.data_parallel_start_rank;
  }
  if (f.data_parallel_size_local < 1 && !f.headless) {
    // A head with no local rank still runs the API servers and the coordinator.
    f.data_parallel_size_local = 0;
  }
  if (f.data_parallel_start_rank + f.data_parallel_size_local > f.data_parallel_size) {
    return InvalidArgument(flag("data-parallel-start-rank", f.data_parallel_start_rank) + " + " +
                           flag("data-parallel-size-local", f.data_parallel_size_local) +
                           " exceeds " + flag("data-parallel-size", f.data_parallel_size));
  }
  if (f.headless) {
    if (f.api_server_count > 1) {  // vLLM tolerates 1 (its default) and ignores it
      return InvalidArgument("--api-server-count " + std::to_string(f.api_server_count) +
                             " with --headless: a headless machine runs no API server; drop it");
    }
    if (f.data_parallel_size_local < 1) {
      return InvalidArgument(
          "--headless needs at least one local DP rank "
          "(--data-parallel-size-local)");
    }
    if (f.data_parallel_address.empty()) {
      return InvalidArgument("--headless needs --data-parallel-address: the head's address");
    }
    return Status::Ok();
  }
  if (f.data_parallel_start_rank != 0 && !LocalRanksOnly(f)) {
    return InvalidArgument(flag("data-parallel-start-rank", f.data_parallel_start_rank) +
                           " is for --headless machines (or --data-parallel-hybrid-lb ones); "
                           "the head serves ranks from 0");
  }
  if (f.api_server_count == 0) {
    return InvalidArgument("--api-server-count 0 needs --headless (no API server otherwise)");
  }
  if (f.api_server_count < 0) f.api_server_count = std::max(1, f.data_parallel_size_local);
  if (f.data_parallel_size_local < f.data_parallel_size && f.data_parallel_address.empty()) {
    return InvalidArgument("--data-parallel-size " + std::to_string(f.data_parallel_size) +
                           " with " + std::to_string(f.data_parallel_size_local) +
                           " local rank(s) needs --data-parallel-address: the address other "
                           "machines dial to join");
  }
  return Status::Ok();
}

Status ValidateServeFlags(ServeFlags& f) {
  if (f.api_key.empty()) {
    if (const char* k = std::getenv("VLLM_API_KEY")) f.api_key = k;
  }
  if (f.model.empty()) return InvalidArgument("no model given: tandem serve MODEL [flags]");
  {
    TANDEM_ASSIGN_OR_RETURN(const tensor::DeviceRequest request, tensor::ParseDeviceFlag(f.device));
    TANDEM_RETURN_IF_ERROR(kernels::BackendFor(request).status());
  }
  TANDEM_RETURN_IF_ERROR(CheckJson("speculative-config", f.speculative_config));
  TANDEM_RETURN_IF_ERROR(CheckJson("compilation-config", f.compilation_config));
  TANDEM_RETURN_IF_ERROR(CheckJson("additional-config", f.additional_config));
  if (!f.additional_config.empty()) {
    const nlohmann::json extra = nlohmann::json::parse(f.additional_config);
    if (!extra.is_object()) {
      return InvalidArgument("--additional-config must be a JSON object, got '" +
                             f.additional_config + "'");
    }
    f.additional_config_ignored.clear();
    for (const auto& [key, value] : extra.items()) {
      if (key == "q8_0_dot") {
        if (!value.is_string() || (value != "int8" && value != "float32")) {
          return InvalidArgument(
              "--additional-config q8_0_dot must be \"int8\" or \"float32\", "
              "got " +
              value.dump());
        }
        f.q8_0_dot = value.get<std::string>();
        continue;
      }
      if (key == "profile_steps") {
        if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
            value.get<int64_t>() > 1000000) {
          return InvalidArgument(
              "--additional-config profile_steps must be an integer in [0, 1000000], got " +
              value.dump());
        }
        f.profile_steps = value.get<int32_t>();
        continue;
      }
      if (key != "enable_cpu_binding") {
        f.additional_config_ignored.push_back(key);
        continue;
      }
      if (!value.is_boolean()) {
        return InvalidArgument(
            "--additional-config enable_cpu_binding must be true or false, got " + value.dump());
      }
      f.enable_cpu_binding = value.get<bool>();
    }
  }
  TANDEM_RETURN_IF_ERROR(CheckJson("default-chat-template-kwargs", f.default_chat_template_kwargs));
  if (f.enable_auto_tool_choice && f.tool_call_parser.empty()) {
    return InvalidArgument(
        "--enable-auto-tool-choice needs --tool-call-parser (hermes or "
        "qwen3_coder)");
  }
  TANDEM_ASSIGN_OR_RETURN(f.speculative, ParseSpeculativeConfig(f.speculative_config));
  TANDEM_RETURN_IF_ERROR(ValidateCompatFlags(f));
  TANDEM_RETURN_IF_ERROR(ValidateDataParallelFlags(f));
  return CheckKvCacheFitsInMemory(f, PhysicalMemoryBytes());
}

Status CheckKvCacheFitsInMemory(const ServeFlags& f, int64_t physical_memory_bytes) {
  if (f.kv_cache_memory_bytes <= 0 || physical_memory_bytes <= 0) return Status::Ok();
  // Every engine process on this machine (local DP ranks x TP ranks) maps a cache this size.
  const int64_t caches =
      int64_t{std::max(1, f.data_parallel_size_local)} * std::max(1, f.tensor_parallel_size);
  const double asked = static_cast<double>(f.kv_cache_memory_bytes) * static_cast<double>(caches);
  if (asked <= static_cast<double>(physical_memory_bytes)) return Status::Ok();
  const auto gib = [](double bytes) { return fmt::format("{:.1f} GiB", bytes / (1 << 30)); };
  return InvalidArgument(
      "--kv-cache-memory-bytes " + std::to_string(f.kv_cache_memory_bytes) + " (" +
      gib(static_cast<double>(f.kv_cache_memory_bytes)) + ")" +
      (caches > 1 ? " x " + std::to_string(caches) + " engine processes on this machine" : "") +
      " exceeds this machine's physical memory of " + std::to_string(physical_memory_bytes) +
      " bytes (" + gib(static_cast<double>(physical_memory_bytes)) +
      "); give at most that, or leave the flag out and let --gpu-memory-utilization size the "
      "cache");
}

void LogIneffectiveFlags(const ServeFlags& f) {
  auto note = [](const std::string& flag) {
    TLOG_INFO("{} accepted; it has no effect on CPU", flag);
  };
  if (!f.compilation_config.empty()) note("--compilation-config");
  for (const std::string& key : f.additional_config_ignored)
    note("--additional-config key '" + key + "'");
  if (f.trust_remote_code) note("--trust-remote-code");
  if (f.async_scheduling) note("--async-scheduling");
  if (f.enforce_eager) note("--enforce-eager");
  LogCompatFlags(f);
  LogAppliedFlags(f);
}

std::vector<std::string> NormalizeFlagSpellings(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    static const std::map<std::string, std::string> kShortForms = {
        {"-tp", "--tensor-parallel-size"},      {"-dp", "--data-parallel-size"},
        {"-pp", "--pipeline-parallel-size"},    {"-dpl", "--data-parallel-size-local"},
        {"-dpa", "--data-parallel-address"},    {"-dpp", "--data-parallel-rpc-port"},
        {"-dpr", "--data-parallel-start-rank"}, {"-dpn", "--data-parallel-rank"},
        {"-dpb", "--data-parallel-backend"},    {"-ep", "--enable-expert-parallel"}};
    // "-dpn 1" and, as argparse also takes it, "-dpn=1".
    const size_t eq = a.rfind("--", 0) == 0 ? std::string::npos : a.find('=');
    if (auto it = kShortForms.find(a.substr(0, eq)); it != kShortForms.end()) {
      a = it->second + (eq == std::string::npos ? "" : a.substr(eq));
    }
    if (a.rfind("--", 0) == 0) {
      size_t end = a.find('=');
      if (end == std::string::npos) end = a.size();
      for (size_t j = 2; j < end; ++j) {
        if (a[j] == '_') a[j] = '-';
      }
    }
    args.push_back(std::move(a));
  }
  return args;
}

}  // namespace tandem::apps
