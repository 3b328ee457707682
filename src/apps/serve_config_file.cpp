// `tandem serve --config FILE.yaml`, vLLM's config file: a mapping of flag names to values,
// expanded into command-line arguments before the flags are parsed (ExpandConfigFile in
// serve_flags.h). Reference: vLLM engine/arg_utils.py and utils FlexibleArgumentParser
// (_load_config_file: yaml.safe_load, keys as flag names, the command line wins).
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apps/serve_flags.h"
#include "core/utf8.h"
#include "text/utf8.h"

namespace tandem::apps {

namespace {

std::string FlagName(std::string key) {
  for (char& c : key) {
    if (c == '_') {
      c = '-';
    }
  }
  return key;
}

// Whether `key` can name a flag: letters, digits, '-' and '_', starting with a letter or digit
// ("max-num-seqs", "max_num_seqs"). Anything else ("a=b", "a b", "--x") would be read as more
// than a name once it is made into "--KEY=VALUE".
bool IsFlagName(const std::string& key) {
  if (key.empty() || !std::isalnum(static_cast<unsigned char>(key[0]))) {
    return false;
  }
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
      return false;
    }
  }
  return true;
}

// What aliases may expand a file to: a few anchors can stand for billions of values ("billion
// laughs"), and chains of merge keys for exponentially many visits. Counted over the whole file:
// every mapping entry, list item and scalar visited, and the bytes of keys and scalars taken.
// A real config has tens of flags; the bounds leave room for a long --chat-template. Each
// scalar taken must be UTF-8.
constexpr int64_t kMaxConfigValues = 100'000;
struct ExpansionBudget {
  int64_t values_left = kMaxConfigValues;
  int64_t bytes_left = 0;  // set from the file's size

  Status Take(const YAML::Node& node) {
    if (--values_left < 0) {
      return InvalidArgument(fmt::format(
          "its aliases expand to more than {} values (an alias bomb?)", kMaxConfigValues));
    }
    if (node.IsScalar()) {
      // PyYAML (vLLM) refuses a file that is not UTF-8; JSON holds nothing else either.
      if (!IsValidUtf8(node.Scalar())) {
        const std::string& value = node.Scalar();
        return InvalidArgument("'" + text::SanitizeUtf8(value.substr(0, 64)) +
                               (value.size() > 64 ? "...'" : "'") + " is not valid UTF-8");
      }
      bytes_left -= static_cast<int64_t>(node.Scalar().size());
      if (bytes_left < 0) {
        return InvalidArgument("its aliases expand to more than 4 times its size plus 1 MiB");
      }
    }
    return Status::Ok();
  }
};

// The long flag names `args` give (after NormalizeFlagSpellings): "--a-b" and "--a-b=…".
std::set<std::string> GivenFlags(const std::vector<std::string>& args) {
  std::set<std::string> given;
  for (const std::string& a : args) {
    if (a.rfind("--", 0) != 0) {
      continue;
    }
    std::string name =
        a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (name.rfind("no-", 0) == 0) {
      name = name.substr(3);
    }
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
Result<Entries> MergedEntries(const YAML::Node& map, ExpansionBudget* budget, int depth = 0) {
  if (depth > 64) {
    return InvalidArgument("nested more than 64 levels (a recursive alias?)");
  }
  Entries merged;
  Entries own;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      return InvalidArgument("a key that is not a flag name");
    }
    TANDEM_RETURN_IF_ERROR(budget->Take(kv.first));
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
      TANDEM_ASSIGN_OR_RETURN(Entries entries, MergedEntries(*it, budget, depth + 1));
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
Result<nlohmann::json> ToJson(const YAML::Node& node, ExpansionBudget* budget, int depth = 0) {
  if (depth > 64) {
    return InvalidArgument("nested more than 64 levels (a recursive alias?)");
  }
  TANDEM_RETURN_IF_ERROR(budget->Take(node));
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    TANDEM_ASSIGN_OR_RETURN(Entries entries, MergedEntries(node, budget, depth));
    for (const auto& [key, value] : entries) {
      TANDEM_ASSIGN_OR_RETURN(out[key.Scalar()], ToJson(value, budget, depth + 1));
    }
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) {
      TANDEM_ASSIGN_OR_RETURN(nlohmann::json value, ToJson(item, budget, depth + 1));
      out.push_back(std::move(value));
    }
    return out;
  }
  if (node.IsNull()) {
    return nlohmann::json(nullptr);
  }
  const std::string text = node.Scalar();
  if (node.Tag() != "!") {  // unquoted: YAML's plain scalars
    if (text == "true" || text == "True") {
      return nlohmann::json(true);
    }
    if (text == "false" || text == "False") {
      return nlohmann::json(false);
    }
    const nlohmann::json number = nlohmann::json::parse(text, nullptr, false);
    if (number.is_number()) {
      return number;
    }
  }
  return nlohmann::json(text);
}

// A flag's value as the command line would give it: the scalar exactly as written in the file
// (0123 stays 0123 for a string flag; CLI11 reads numbers itself), JSON for mappings.
Result<std::string> FlagText(const YAML::Node& node, ExpansionBudget* budget) {
  if (node.IsScalar()) {
    TANDEM_RETURN_IF_ERROR(budget->Take(node));
    return node.Scalar();
  }
  TANDEM_ASSIGN_OR_RETURN(nlohmann::json value, ToJson(node, budget));
  return value.dump();
}

}  // namespace

Result<std::vector<std::string>> ExpandConfigFile(std::vector<std::string> args,
                                                  ServeFlags::ConfigFileUse* use) {
  std::string path;
  bool given = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) {
      path = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      given = true;
      break;
    }
    if (args[i].rfind("--config=", 0) == 0) {
      path = args[i].substr(9);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      given = true;
      break;
    }
  }
  if (!given) {
    return args;
  }
  if (path.empty()) {
    return InvalidArgument("--config '': no file named");
  }
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
  if (root.IsNull()) {
    return args;
  }
  if (!root.IsMap()) {
    return InvalidArgument("--config '" + path + "': expected a mapping of flag names to values");
  }
  const std::set<std::string> on_command_line = GivenFlags(args);
  ExpansionBudget budget;
  budget.bytes_left = 4 * static_cast<int64_t>(info.st_size) + (int64_t{1} << 20);
  try {
    auto entries = MergedEntries(root, &budget);
    if (!entries.ok()) {
      return InvalidArgument("--config '" + path + "': " + entries.status().message());
    }
    for (const auto& kv : *entries) {
      const std::string key = kv.first.Scalar();
      const std::string name = FlagName(key);
      const auto fail = [&](const std::string& why) {
        return InvalidArgument("--config '" + path + "': key '" + key + "': " + why);
      };
      if (!IsFlagName(key)) {
        return fail("not a flag name (letters, digits, '-' and '_')");
      }
      if (name == "config") {
        return fail("a config file cannot name another");
      }
      if (name == "help" || name == "version") {
        return fail("not a setting: a config file gives flags' values");
      }
      if (on_command_line.count(name)) {  // the command line wins
        use->flags_overridden.push_back(name);
        continue;
      }
      const YAML::Node& node = kv.second;
      if (node.IsNull()) {
        return fail("no value");
      }
      if (name == "model") {
        // The positional MODEL (right after the program name) wins over the file's.
        if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
          use->flags_overridden.push_back(name);
          continue;
        }
        if (!node.IsScalar()) {
          return fail("the model must be a path");
        }
        args.push_back("--model=" + node.Scalar());
      } else if (node.IsScalar() && node.Tag() != "!" &&
                 (node.Scalar() == "true" || node.Scalar() == "false" || node.Scalar() == "True" ||
                  node.Scalar() == "False")) {
        const bool on = node.Scalar() == "true" || node.Scalar() == "True";
        args.push_back("--" + name + "=" + (on ? "true" : "false"));
      } else if (node.IsSequence()) {
        for (const auto& item : node) {
          auto text = FlagText(item, &budget);
          if (!text.ok()) {
            return fail(text.status().message());
          }
          args.push_back("--" + name + "=" + *text);
        }
      } else {
        auto text = FlagText(node, &budget);  // mappings as JSON (--speculative-config and kin)
        if (!text.ok()) {
          return fail(text.status().message());
        }
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
