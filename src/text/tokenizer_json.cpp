#include "text/tokenizer_json.h"

namespace tandem::text {

using nlohmann::json;

std::string TokenizerNodeType(const json& node) {
  return node.is_object() && node.contains("type") && node["type"].is_string()
             ? node["type"].get<std::string>()
             : std::string();
}

std::vector<json> SequenceSteps(const json& node, const char* list_key) {
  if (node.is_null()) {
    return {};
  }
  if (TokenizerNodeType(node) == "Sequence" && node.contains(list_key) &&
      node[list_key].is_array()) {
    return node[list_key].get<std::vector<json>>();
  }
  return {node};
}

std::string AddedTokenContent(const json& node) {
  if (node.is_string()) {
    return node.get<std::string>();
  }
  if (node.is_object() && node.contains("content") && node["content"].is_string()) {
    return node["content"].get<std::string>();
  }
  return "";
}

}  // namespace tandem::text
