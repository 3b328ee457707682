#include "model/config/hf_config.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "core/regular_file.h"

namespace tandem::model {

Result<nlohmann::json> ReadHfConfigJson(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  auto text = ReadRegularFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFound("model folder '" + dir + "' has no config.json");
    }
    return text.status();
  }
  nlohmann::json j;
  try {  // allow_exceptions=false still throws out_of_range for numbers beyond double range
    j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  } catch (const nlohmann::json::exception&) {
    j = nlohmann::json::value_t::discarded;
  }
  if (j.is_discarded() || !j.is_object()) return DataLoss("'" + path + "' is not a JSON object");
  return j;
}

Result<std::string> ReadHfArchitecture(const std::string& dir) {
  TANDEM_ASSIGN_OR_RETURN(const nlohmann::json j, ReadHfConfigJson(dir));
  const auto it = j.find("architectures");
  if (it == j.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) {
    return InvalidArgument("'" + (std::filesystem::path(dir) / "config.json").string() +
                           "' has no \"architectures\" list naming the model class (expected e.g. "
                           "[\"Qwen3ForCausalLM\"])");
  }
  return (*it)[0].get<std::string>();
}

int64_t CountCheckpointLayers(const std::vector<std::string>& tensor_names) {
  static const std::string kLayers = "layers.";
  int64_t count = 0;
  for (const std::string& name : tensor_names) {
    if (name.rfind("mtp.", 0) == 0) continue;
    for (size_t at = name.find(kLayers); at != std::string::npos; at = name.find(kLayers, at + 1)) {
      if (at != 0 && name[at - 1] != '.') continue;
      const char* begin = name.data() + at + kLayers.size();
      const char* end = name.data() + name.size();
      int64_t index = 0;
      const auto [stop, error] = std::from_chars(begin, end, index);
      if (error == std::errc() && stop != begin && stop != end && *stop == '.') {
        count = std::max(count, index + 1);
      }
    }
  }
  return count;
}

Status CheckLayerCount(const std::string& config_path, const nlohmann::json& config,
                       const std::vector<std::string>& tensor_names) {
  const nlohmann::json& text = config.contains("text_config") && config["text_config"].is_object()
                                   ? config["text_config"]
                                   : config;
  const auto field = text.find("num_hidden_layers");
  if (field == text.end() || !field->is_number_integer()) return Status::Ok();
  const int64_t present = CountCheckpointLayers(tensor_names);
  if (field->is_number_unsigned() ? field->get<uint64_t>() == static_cast<uint64_t>(present)
                                  : field->get<int64_t>() == present) {
    return Status::Ok();
  }
  return InvalidArgument(
      "'" + config_path + "': num_hidden_layers is " + field->dump() +
      " but the checkpoint holds tensors for " + std::to_string(present) + " layers" +
      (present > 0 ? " (layers.0 … layers." + std::to_string(present - 1) + ")" : "") +
      "; the two must agree");
}

Status CheckHfLayerCount(const std::string& dir, const std::vector<std::string>& tensor_names) {
  TANDEM_ASSIGN_OR_RETURN(const nlohmann::json config, ReadHfConfigJson(dir));
  return CheckLayerCount((std::filesystem::path(dir) / "config.json").string(), config,
                         tensor_names);
}

}  // namespace tandem::model
