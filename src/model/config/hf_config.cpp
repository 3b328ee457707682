#include "model/config/hf_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace tandem::model {

Result<std::string> ReadHfArchitecture(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  std::ifstream in(path);
  if (!in) return NotFound("model folder '" + dir + "' has no config.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss("'" + path + "' is not a JSON object");
  const auto it = j.find("architectures");
  if (it == j.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) {
    return InvalidArgument("'" + path +
                           "' has no \"architectures\" list naming the model class (expected e.g. "
                           "[\"Qwen3ForCausalLM\"])");
  }
  return (*it)[0].get<std::string>();
}

}  // namespace tandem::model
