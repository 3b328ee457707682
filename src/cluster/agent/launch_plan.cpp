#include "cluster/agent/launch_plan.h"

#include <fmt/format.h>

#include <charconv>

#include "cluster/agent/command_line.h"

namespace tandem::cluster::agent {

using nlohmann::json;

namespace {

std::map<std::string, std::string> StringMap(const json& object) {
  std::map<std::string, std::string> out;
  if (!object.is_object()) return out;
  for (const auto& [k, v] : object.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

// `words` without `--name`/`--name=v`/`--name v` (either spelling of '_' and '-').
std::vector<std::string> WithoutFlag(const std::vector<std::string>& words, const std::string& name,
                                     bool takes_value) {
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (HasFlag({words[i]}, name)) {
      if (takes_value && words[i].find('=') == std::string::npos) ++i;
      continue;
    }
    out.push_back(words[i]);
  }
  return out;
}

}  // namespace

Result<LaunchPlan> PlanLaunch(const json& instance, const json& model, const json& backend,
                              const WorkerFacts& worker, int64_t port, int64_t rpc_port,
                              int subordinate_index) {
  LaunchPlan plan;
  const json& servers = instance.value("distributed_servers", json::object());
  const json subordinates = servers.value("subordinate_workers", json::array());
  const bool subordinate = subordinate_index >= 0;
  const json& placement = subordinate ? subordinates.at(subordinate_index) : instance;
  plan.gpu_indexes = placement.value("gpu_indexes", std::vector<int64_t>{});
  plan.gpu_type = placement.value("gpu_type", "");
  plan.local_path = model.value("local_path", "");

  // The backend version: the deployment's, else the backend's default.
  std::string version = model.value("backend_version", "");
  if (version.empty()) version = backend.value("default_version", "");
  json version_config = json::object();
  if (!version.empty()) {
    const json& versions = backend.value("version_configs", json::object());
    if (!versions.contains(version)) {
      return InvalidArgument(fmt::format("backend '{}' has no version '{}'",
                                         backend.value("backend_name", ""), version));
    }
    version_config = versions[version];
  }
  std::string entrypoint = version_config.value("entrypoint", "");
  if (entrypoint.empty()) entrypoint = backend.value("default_entrypoint", "");
  std::string run_command = version_config.value("run_command", "");
  if (run_command.empty()) run_command = backend.value("default_run_command", "");
  plan.health_path = backend.value("health_check_path", "/v1/models");

  const std::map<std::string, std::string> deployment_env =
      StringMap(model.value("env", json::object()));
  std::map<std::string, std::string> values = deployment_env;  // {{ENV_NAME}} first, then ours
  std::string gpu_ids;
  for (int64_t i : plan.gpu_indexes) gpu_ids += (gpu_ids.empty() ? "" : ",") + std::to_string(i);
  values["model_path"] = plan.local_path;
  values["model_name"] = model.value("name", "");
  values["port"] = std::to_string(port);
  values["worker_ip"] = worker.worker_ip;
  values["gpu_count"] = std::to_string(plan.gpu_indexes.size());
  values["gpu_ids"] = gpu_ids;

  auto entry_words = SplitPosixWords(entrypoint);
  if (!entry_words.ok()) return InvalidArgument("entrypoint: " + entry_words.status().message());
  if (entry_words->empty()) return InvalidArgument("the backend has no entrypoint");
  if ((*entry_words)[0] == "tandem" && !worker.self_exe.empty())
    (*entry_words)[0] = worker.self_exe;
  // Split first, then fill each word: a value with spaces (a path, an env value) stays one
  // argument and cannot add flags.
  auto run_words = SplitPosixWords(run_command);
  if (!run_words.ok()) return InvalidArgument("run_command: " + run_words.status().message());
  for (std::string& word : *run_words) {
    auto filled = RenderPlaceholders(word, values);
    if (!filled.ok()) return InvalidArgument("run_command: " + filled.status().message());
    word = std::move(filled).value();
  }
  std::vector<std::string> parameters;
  for (const json& p : model.value("backend_parameters", json::array())) {
    if (p.is_string()) parameters.push_back(p.get<std::string>());
  }
  auto param_words = BackendParameterWords(parameters, backend.value("parameter_format", "space"));
  if (!param_words.ok()) return param_words.status();
  for (std::string& word : *param_words) {
    auto filled = RenderPlaceholders(word, values);
    if (!filled.ok()) return InvalidArgument("backend_parameters: " + filled.status().message());
    word = std::move(filled).value();
  }

  std::vector<std::string> args = *run_words;
  args.insert(args.end(), param_words->begin(), param_words->end());

  plan.env_layers = {StringMap(backend.value("default_env", json::object())),
                     StringMap(version_config.value("env", json::object())), deployment_env};
  plan.env_extra = VisibleDevicesEnv(plan.gpu_type, plan.gpu_indexes);

  const bool distributed = model.value("distributed_inference_across_workers", false);
  if (distributed) {
    const std::string dp_text = FlagValue(args, "--data-parallel-size");
    int64_t dp = 0;
    auto [ptr, ec] = std::from_chars(dp_text.data(), dp_text.data() + dp_text.size(), dp);
    const int64_t workers = 1 + static_cast<int64_t>(subordinates.size());
    if (dp_text.empty() || ec != std::errc() || dp < 1) {
      return InvalidArgument(
          "a deployment across workers needs --data-parallel-size N in its backend parameters "
          "(the manager splits the N ranks over the workers)");
    }
    if (dp % workers != 0) {
      return InvalidArgument(fmt::format(
          "--data-parallel-size {} does not split evenly over the deployment's {} workers", dp,
          workers));
    }
    const int64_t local = dp / workers;
    for (const char* owned : {"--data-parallel-size-local", "--data-parallel-address",
                              "--data-parallel-rpc-port", "--data-parallel-start-rank"}) {
      args = WithoutFlag(args, owned, true);
    }
    args = WithoutFlag(args, "--headless", false);
    const std::string head_ip = instance.value("worker_ip", "");
    args.insert(args.end(),
                {"--data-parallel-size-local", std::to_string(local), "--data-parallel-address",
                 head_ip, "--data-parallel-rpc-port", std::to_string(rpc_port)});
    if (subordinate) {
      args = WithoutFlag(args, "--api-server-count", true);
      args.insert(args.end(), {"--headless", "--data-parallel-start-rank",
                               std::to_string(local * (subordinate_index + 1))});
    }
    if (!worker.interface_name.empty()) {
      for (const char* nic :
           {"GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"}) {
        plan.env_extra[nic] = worker.interface_name;
      }
    }
    plan.env_extra["HCCL_IF_IP"] = worker.worker_ip;
  }
  plan.follower = HasFlag(args, "--headless");
  if (plan.follower) {
    const std::string local = FlagValue(args, "--data-parallel-size-local");
    plan.follower_ranks = local.empty() ? 1 : std::max<int64_t>(1, std::atoll(local.c_str()));
    plan.head = FlagValue(args, "--data-parallel-address") + ":" +
                FlagValue(args, "--data-parallel-rpc-port");
  }
  if (auto it = deployment_env.find("TANDEM_STARTUP_TIMEOUT_S"); it != deployment_env.end()) {
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0' || !(v > 0)) {
      return InvalidArgument(fmt::format(
          "env TANDEM_STARTUP_TIMEOUT_S='{}' is not a positive number of seconds", it->second));
    }
    plan.startup_timeout_s = v;
  }
  plan.argv = *entry_words;
  plan.argv.insert(plan.argv.end(), args.begin(), args.end());
  return plan;
}

}  // namespace tandem::cluster::agent
