// /v2/models and /v2/inference-backends: create and update, with the references checked.
#include "cluster/manager/rest_api.h"

#include <fmt/format.h>

#include <set>

#include "cluster/manager/resources.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Record;
using store::Table;

Status RestApi::CheckModelReferences(const json& model) {
  const std::string backend_name = model["backend"];
  auto backend = store_.FindByName(Table::kInferenceBackends, backend_name);
  if (!backend.ok()) return backend.status();
  if (!backend->has_value()) {
    return InvalidArgument(
        fmt::format("model: backend '{}' does not exist (register it at /v2/inference-backends)",
                    backend_name));
  }
  const json& b = (*backend)->data;
  const std::string version = model["backend_version"];
  if (!version.empty() && !b["version_configs"].contains(version)) {
    std::string known;
    for (const auto& [v, c] : b["version_configs"].items())
      known += (known.empty() ? "" : ", ") + v;
    return InvalidArgument(fmt::format("model: backend '{}' has no version '{}' (it has: {})",
                                       backend_name, version, known.empty() ? "none" : known));
  }
  const json& ids = model["gpu_selector"]["gpu_ids"];
  if (ids.empty()) return Status::Ok();
  auto devices = store_.List(Table::kGpuDevices);
  if (!devices.ok()) return devices.status();
  std::set<std::string> known;
  for (const Record& d : *devices) known.insert(d.name);
  for (const json& id : ids) {
    const std::string s = id;
    if (known.count(s)) continue;
    const std::string worker = s.substr(0, s.find(':'));
    std::string of_worker;
    for (const std::string& k : known) {
      if (k.rfind(worker + ":", 0) == 0) of_worker += (of_worker.empty() ? "" : ", ") + k;
    }
    return InvalidArgument(
        of_worker.empty()
            ? fmt::format("model: gpu_selector.gpu_ids: no worker '{}' has registered (in '{}')",
                          worker, s)
            : fmt::format("model: gpu_selector.gpu_ids: no device '{}'; worker '{}' has {}", s,
                          worker, of_worker));
  }
  return Status::Ok();
}

Result<json> RestApi::CreateModel(const json& body) {
  auto model = ValidateModel(body);
  if (!model.ok()) return model.status();
  TANDEM_RETURN_IF_ERROR(CheckModelReferences(*model));
  (*model)["ready_replicas"] = 0;
  const std::string name = (*model)["name"];  // before the move below
  auto record = store_.Create(Table::kModels, name, std::move(model).value());
  if (!record.ok()) return record.status();
  return PublicView(Table::kModels, *record);
}

Result<json> RestApi::UpdateModel(int64_t id, const json& body) {
  auto current = store_.Get(Table::kModels, id);
  if (!current.ok()) return current.status();
  auto model = ValidateModel(body);
  if (!model.ok()) return model.status();
  TANDEM_RETURN_IF_ERROR(CheckModelReferences(*model));
  (*model)["ready_replicas"] = current->data.value("ready_replicas", 0);
  auto expected_version = ExpectedVersion(body);
  if (!expected_version.ok()) return expected_version.status();
  const int64_t expected = *expected_version;
  // A change to what an instance runs replaces the deployment's instances (the controller
  // makes new ones); replicas, name and description changes do not.
  bool relaunch = false;
  for (const char* field : {"local_path", "backend", "backend_version", "backend_parameters", "env",
                            "placement_strategy", "worker_selector", "gpu_selector",
                            "distributed_inference_across_workers"}) {
    relaunch |= current->data.value(field, json()) != (*model)[field];
  }
  const std::string name = (*model)["name"];  // before the move below
  auto record = store_.Update(Table::kModels, id, name, std::move(model).value(), expected);
  if (!record.ok()) return record.status();
  if (relaunch) {
    auto instances = store_.List(Table::kModelInstances);
    if (!instances.ok()) return instances.status();
    for (const Record& i : *instances) {
      if (i.data.value("model_id", int64_t{0}) == id)
        (void)store_.Delete(Table::kModelInstances, i.id);
    }
  }
  return PublicView(Table::kModels, *record);
}

Result<json> RestApi::CreateBackend(const json& body) {
  auto backend = ValidateBackend(body);
  if (!backend.ok()) return backend.status();
  const std::string name = (*backend)["backend_name"];  // before the move below
  auto record = store_.Create(Table::kInferenceBackends, name, std::move(backend).value());
  if (!record.ok()) return record.status();
  return PublicView(Table::kInferenceBackends, *record);
}

Result<json> RestApi::UpdateBackend(int64_t id, const json& body) {
  auto current = store_.Get(Table::kInferenceBackends, id);
  if (!current.ok()) return current.status();
  if (current->data.value("is_built_in", false)) {
    return InvalidArgument(
        "the built-in backend 'tandem' cannot be changed; register a custom "
        "one ('<name>-custom')");
  }
  auto backend = ValidateBackend(body);
  if (!backend.ok()) return backend.status();
  auto expected_version = ExpectedVersion(body);
  if (!expected_version.ok()) return expected_version.status();
  const int64_t expected = *expected_version;
  const std::string name = (*backend)["backend_name"];  // before the move below
  auto record =
      store_.Update(Table::kInferenceBackends, id, name, std::move(backend).value(), expected);
  if (!record.ok()) return record.status();
  return PublicView(Table::kInferenceBackends, *record);
}

}  // namespace tandem::cluster::manager
