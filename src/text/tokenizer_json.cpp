#include "text/tokenizer_json.h"

#include <limits>

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

Result<std::vector<AddedTokenEntry>> ReadAddedTokens(const json& root, const std::string& path) {
  std::vector<AddedTokenEntry> out;
  const auto list = root.is_object() ? root.find("added_tokens") : root.end();
  if (list == root.end() || list->is_null()) {
    return out;
  }
  if (!list->is_array()) {
    return InvalidArgument("'" + path + "': added_tokens should be a list");
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const json& token = (*list)[i];
    const std::string at = "'" + path + "': added_tokens[" + std::to_string(i) + "]";
    if (!token.is_object()) {
      return InvalidArgument(at + " should be an object {\"id\", \"content\", ...}");
    }
    const auto content = token.find("content");
    if (content == token.end() || !content->is_string()) {
      return InvalidArgument(at + ".content should be a string");
    }
    const auto id = token.find("id");
    if (id == token.end() || !id->is_number_integer()) {
      return InvalidArgument(at + ".id should be an integer");
    }
    const auto special = token.find("special");
    if (special != token.end() && !special->is_boolean()) {
      return InvalidArgument(at + ".special should be true or false");
    }
    // An id past int64 is kept as its largest value: the loaders refuse ids >= 2^24.
    constexpr int64_t kMaxId = std::numeric_limits<int64_t>::max();
    const bool too_big = id->is_number_unsigned() && id->get<uint64_t>() > uint64_t{kMaxId};
    out.push_back({content->get<std::string>(), too_big ? kMaxId : id->get<int64_t>(),
                   special != token.end() && special->get<bool>()});
  }
  return out;
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
