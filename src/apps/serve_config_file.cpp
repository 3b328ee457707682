// `tandem serve --config FILE.yaml`, vLLM's config file: a mapping of flag names to values,
// expanded into command-line arguments before the flags are parsed (ExpandConfigFile in
// serve_flags.h). Reference: vLLM engine/arg_utils.py and utils FlexibleArgumentParser
// (_load_config_file: yaml.safe_load, keys as flag names, the command line wins).
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apps/serve_flags.h"

namespace tandem::apps {

namespace {

std::string FlagName(std::string key) {
  for (char& c : key) {
    if (c == '_') c = '-';
  }
  return key;
}

// The long flag names `args` give (after NormalizeFlagSpellings): "--a-b" and "--a-b=…".
std::set<std::string> GivenFlags(const std::vector<std::string>& args) {
  std::set<std::string> given;
  for (const std::string& a : args) {
    if (a.rfind("--", 0) != 0) continue;
    std::string name =
        a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (name.rfind("no-", 0) == 0) name = name.substr(3);
    given.insert(name);
  }
  return given;
}

// Whether `key` is YAML's merge key: a plain (unquoted) "<<", as in `<<: *defaults`. yaml-cpp
// does not implement merges (YAML 1.1's merge type): it reads "<<" as a key of its own.
bool IsMergeKey(const YAML::Node& key) {
  return key.IsScalar() && key.Tag() != "!" && key.Scalar() == "<<";
}

using Entries = std::vector<std::pair<YAML::Node, YAML::Node>>;

// The entries of mapping `map` with YAML 1.1 merge keys resolved as PyYAML's safe_load (vLLM's
// reader, SafeConstructor.flatten_mapping) resolves them: `<<: *a` takes a's entries,
// `<<: [*a, *b]` takes b's then a's (the first listed wins), merged mappings' own merges
// included; the mapping's own keys win over merged ones, and of a key given twice the last
// wins. Each key once, in order. Errors: kInvalidArgument for a merge value that is not a
// mapping or a list of mappings, a key that is not a scalar, past 64 levels.
Result<Entries> MergedEntries(const YAML::Node& map, int depth = 0) {
  if (depth > 64) {
    return InvalidArgument("nested more than 64 levels (a recursive alias?)");
  }
  Entries merged;
  Entries own;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      return InvalidArgument("a key that is not a flag name");
    }
    if (!IsMergeKey(kv.first)) {
      own.emplace_back(kv.first, kv.second);
      continue;
    }
    std::vector<YAML::Node> sources;
    if (kv.second.IsMap()) {
      sources.push_back(kv.second);
    } else if (kv.second.IsSequence()) {
      for (const auto& item : kv.second) {
        if (!item.IsMap()) {
          return InvalidArgument("a merge key ('<<') takes a mapping or a list of mappings");
        }
        sources.push_back(item);
      }
    } else {
      return InvalidArgument("a merge key ('<<') takes a mapping or a list of mappings");
    }
    for (auto it = sources.rbegin(); it != sources.rend(); ++it) {
      TANDEM_ASSIGN_OR_RETURN(Entries entries, MergedEntries(*it, depth + 1));
      merged.insert(merged.end(), entries.begin(), entries.end());
    }
  }
  merged.insert(merged.end(), own.begin(), own.end());
  // Later entries win; each key keeps the place of its last entry. (Built by copies only:
  // assigning a YAML::Node, as std::reverse's swaps would, overwrites the node it refers to.)
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < merged.size(); ++i) {
    last[merged[i].first.Scalar()] = i;
  }
  Entries out;
  for (size_t i = 0; i < merged.size(); ++i) {
    if (last[merged[i].first.Scalar()] == i) {
      out.push_back(merged[i]);
    }
  }
  return out;
}

// A YAML node as JSON (mappings and lists nested; plain scalars typed as YAML reads them:
// true/false, integers, numbers; quoted ones strings; merge keys resolved). Errors:
// kInvalidArgument past 64 levels (a recursive alias would never end), for a key that is not a
// scalar, or a malformed merge.
Result<nlohmann::json> ToJson(const YAML::Node& node, int depth = 0) {
  if (depth > 64) return InvalidArgument("nested more than 64 levels (a recursive alias?)");
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    TANDEM_ASSIGN_OR_RETURN(Entries entries, MergedEntries(node, depth));
    for (const auto& [key, value] : entries) {
      TANDEM_ASSIGN_OR_RETURN(out[key.Scalar()], ToJson(value, depth + 1));
    }
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) {
      TANDEM_ASSIGN_OR_RETURN(nlohmann::json value, ToJson(item, depth + 1));
      out.push_back(std::move(value));
    }
    return out;
  }
  if (node.IsNull()) return nlohmann::json(nullptr);
  const std::string text = node.Scalar();
  if (node.Tag() != "!") {  // unquoted: YAML's plain scalars
    if (text == "true" || text == "True") return nlohmann::json(true);
    if (text == "false" || text == "False") return nlohmann::json(false);
    const nlohmann::json number = nlohmann::json::parse(text, nullptr, false);
    if (number.is_number()) return number;
  }
  return nlohmann::json(text);
}

// A flag's value as the command line would give it: the scalar exactly as written in the file
// (0123 stays 0123 for a string flag; CLI11 reads numbers itself), JSON for mappings.
Result<std::string> FlagText(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  TANDEM_ASSIGN_OR_RETURN(nlohmann::json value, ToJson(node));
  return value.dump();
}

}  // namespace

Result<std::vector<std::string>> ExpandConfigFile(std::vector<std::string> args,
                                                  ServeFlags::ConfigFileUse* use) {
  std::string path;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) {
      path = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      break;
    }
    if (args[i].rfind("--config=", 0) == 0) {
      path = args[i].substr(9);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (path.empty()) return args;
  for (const std::string& arg : args) {
    if (arg == "--config" || arg.rfind("--config=", 0) == 0) {
      return InvalidArgument("--config is given more than once; give one file (as vLLM does)");
    }
  }
  use->path = path;
  // A regular file only: a FIFO would block start-up before signals are handled, a directory
  // or a device cannot hold a config.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return InvalidArgument("--config '" + path + "': cannot read the file");
  }
  if (!S_ISREG(info.st_mode)) {
    return InvalidArgument("--config '" + path + "': not a regular file");
  }
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAllFromFile(path);
  } catch (const YAML::BadFile&) {
    return InvalidArgument("--config '" + path + "': cannot read the file");
  } catch (const YAML::Exception& e) {
    return InvalidArgument("--config '" + path + "': not YAML: " + e.what());
  } catch (const std::exception& e) {
    return InvalidArgument("--config '" + path + "': cannot read the file: " + e.what());
  }
  if (documents.size() > 1) {
    // vLLM's yaml.safe_load refuses a second document too; taking the first would drop the
    // rest of the file without a word.
    return InvalidArgument(fmt::format(
        "--config '{}': holds {} YAML documents (a '---' line starts each after the first); a "
        "config file is one mapping of flag names to values: remove the '---' line(s)",
        path, documents.size()));
  }
  const YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
  if (root.IsNull()) return args;
  if (!root.IsMap()) {
    return InvalidArgument("--config '" + path + "': expected a mapping of flag names to values");
  }
  const std::set<std::string> given = GivenFlags(args);
  try {
    auto entries = MergedEntries(root);
    if (!entries.ok()) {
      return InvalidArgument("--config '" + path + "': " + entries.status().message());
    }
    for (const auto& kv : *entries) {
      const std::string key = kv.first.Scalar();
      const std::string name = FlagName(key);
      const auto fail = [&](const std::string& why) {
        return InvalidArgument("--config '" + path + "': key '" + key + "': " + why);
      };
      if (name == "config") return fail("a config file cannot name another");
      if (given.count(name)) {  // the command line wins
        use->flags_overridden.push_back(name);
        continue;
      }
      const YAML::Node& node = kv.second;
      if (node.IsNull()) return fail("no value");
      if (name == "model") {
        // The positional MODEL (right after the program name) wins over the file's.
        if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
          use->flags_overridden.push_back(name);
          continue;
        }
        if (!node.IsScalar()) return fail("the model must be a path");
        args.push_back("--model=" + node.Scalar());
      } else if (node.IsScalar() && node.Tag() != "!" &&
                 (node.Scalar() == "true" || node.Scalar() == "false" || node.Scalar() == "True" ||
                  node.Scalar() == "False")) {
        const bool on = node.Scalar() == "true" || node.Scalar() == "True";
        args.push_back("--" + name + "=" + (on ? "true" : "false"));
      } else if (node.IsSequence()) {
        for (const auto& item : node) {
          auto text = FlagText(item);
          if (!text.ok()) return fail(text.status().message());
          args.push_back("--" + name + "=" + *text);
        }
      } else {
        auto text = FlagText(node);  // mappings as JSON (--speculative-config and kin)
        if (!text.ok()) return fail(text.status().message());
        args.push_back("--" + name + "=" + *text);
      }
      use->flags_taken.push_back(name);
    }
  } catch (const std::exception& e) {
    return InvalidArgument("--config '" + path + "': " + e.what());
  }
  return args;
}

}  // namespace tandem::apps
