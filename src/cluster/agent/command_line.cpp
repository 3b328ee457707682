#include "cluster/agent/command_line.h"

#include <fmt/format.h>

#include <algorithm>

namespace tandem::cluster::agent {

Result<std::string> RenderPlaceholders(std::string_view text,
                                       const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, open - pos));
    const size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return InvalidArgument(fmt::format("unclosed '{{{{' at character {} of '{}'", open, text));
    }
    std::string_view name = text.substr(open + 2, close - open - 2);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    auto it = values.find(std::string(name));
    if (it == values.end()) {
      std::string known;
      for (const auto& [k, v] : values) known += (known.empty() ? "" : ", ") + k;
      return InvalidArgument(
          fmt::format("unknown placeholder '{{{{{}}}}}' (known: {})", name, known));
    }
    out += it->second;
    pos = close + 2;
  }
  return out;
}

Result<std::vector<std::string>> SplitPosixWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  size_t i = 0;
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (i < text.size()) {
    const char c = text[i];
    if (blank(c)) {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
      ++i;
    } else if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '\'') {
      const size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) {
        return InvalidArgument(fmt::format("unbalanced ' at character {} of: {}", i, text));
      }
      word.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      size_t j = i + 1;
      bool closed = false;
      while (j < text.size()) {
        if (text[j] == '"') {
          closed = true;
          break;
        }
        if (text[j] == '\\' && j + 1 < text.size() &&
            (text[j + 1] == '"' || text[j + 1] == '\\' || text[j + 1] == '$' ||
             text[j + 1] == '`' || text[j + 1] == '\n')) {
          if (text[j + 1] != '\n') word += text[j + 1];
          j += 2;
          continue;
        }
        word += text[j++];
      }
      if (!closed)
        return InvalidArgument(fmt::format("unbalanced \" at character {} of: {}", i, text));
      in_word = true;
      i = j + 1;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) {
        return InvalidArgument(fmt::format("a trailing backslash at the end of: {}", text));
      }
      if (text[i + 1] != '\n') {
        word += text[i + 1];
        in_word = true;
      }
      i += 2;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

namespace {

bool IsNegativeNumber(const std::string& w) {
  if (w.size() < 2 || w[0] != '-') return false;
  return std::all_of(w.begin() + 1, w.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

bool IsFlag(const std::string& w) { return w.size() > 2 && w[0] == '-' && w[1] == '-'; }

std::string NormalizeFlag(std::string_view flag) {
  std::string out(flag);
  for (size_t i = 2; i < out.size(); ++i) {
    if (out[i] == '_') out[i] = '-';
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> BackendParameterWords(const std::vector<std::string>& entries,
                                                       const std::string& parameter_format) {
  std::vector<std::string> words;
  for (size_t e = 0; e < entries.size(); ++e) {
    auto split = SplitPosixWords(entries[e]);
    if (!split.ok()) {
      return InvalidArgument(
          fmt::format("backend_parameters[{}]: {}", e, split.status().message()));
    }
    for (std::string& w : *split) words.push_back(std::move(w));
  }
  std::vector<std::string> out;
  if (parameter_format == "equal") {
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& w = words[i];
      const bool takes_next =
          IsFlag(w) && w.find('=') == std::string::npos && i + 1 < words.size() &&
          (words[i + 1].empty() || words[i + 1][0] != '-' || IsNegativeNumber(words[i + 1]));
      if (takes_next) {
        out.push_back(w + "=" + words[i + 1]);
        ++i;
      } else {
        out.push_back(w);
      }
    }
    return out;
  }
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    if (IsFlag(w) && eq != std::string::npos) {
      out.push_back(w.substr(0, eq));
      out.push_back(w.substr(eq + 1));
    } else {
      out.push_back(w);
    }
  }
  return out;
}

bool HasFlag(const std::vector<std::string>& words, std::string_view name) {
  const std::string want = NormalizeFlag(name);
  for (const std::string& w : words) {
    if (!IsFlag(w)) continue;
    const std::string flag = NormalizeFlag(std::string_view(w).substr(0, w.find('=')));
    if (flag == want) return true;
  }
  return false;
}

std::string FlagValue(const std::vector<std::string>& words, std::string_view name) {
  const std::string want = NormalizeFlag(name);
  std::string value;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!IsFlag(w)) continue;
    const size_t eq = w.find('=');
    if (NormalizeFlag(std::string_view(w).substr(0, eq)) != want) continue;
    if (eq != std::string::npos) {
      value = w.substr(eq + 1);
    } else if (i + 1 < words.size()) {
      value = words[i + 1];
    }
  }
  return value;
}

std::vector<std::string> BuildEnvironment(
    const std::map<std::string, std::string>& base,
    const std::vector<std::map<std::string, std::string>>& layers,
    const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : base) {
    if (k.rfind("TANDEM_AGENT_", 0) != 0) env[k] = v;  // the agent's own secrets stay here
  }
  for (const auto& layer : layers) {
    for (const auto& [k, v] : layer) env[k] = v;
  }
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::map<std::string, std::string> VisibleDevicesEnv(const std::string& type,
                                                     const std::vector<int64_t>& indexes) {
  std::string list;
  for (int64_t i : indexes) list += (list.empty() ? "" : ",") + std::to_string(i);
  if (type == "cuda") return {{"CUDA_VISIBLE_DEVICES", list}};
  if (type == "cann") return {{"ASCEND_RT_VISIBLE_DEVICES", list}};
  return {};
}

}  // namespace tandem::cluster::agent
