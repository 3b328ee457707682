// The two ways a `tandem serve` flag is declared (serve_flags.cpp, serve_flags_compat.cpp):
// Opt (a value) and Flag (a boolean with its --no- negation), each with env TANDEM_<NAME> and
// its default shown in --help.
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <string>

#include "apps/serve_flags.h"

namespace tandem::apps {

inline std::string EnvName(const std::string& name) {
  std::string env = "TANDEM_";
  for (char c : name) env += (c == '-') ? '_' : static_cast<char>(std::toupper(c));
  return env;
}

// `aliases` are extra spellings such as ",-tp" (vLLM's short forms).
template <typename T>
CLI::Option* Opt(CLI::App& app, const std::string& name, T& target, const std::string& help,
                 const std::string& aliases = "") {
  return app.add_option("--" + name + aliases, target, help)
      ->capture_default_str()
      ->envname(EnvName(name));
}

// Boolean with its negation: `--name` / `--no-name`.
inline CLI::Option* Flag(CLI::App& app, const std::string& name, bool& target,
                         const std::string& help) {
  return app.add_flag("--" + name + ",!--no-" + name, target, help)
      ->capture_default_str()
      ->envname(EnvName(name));
}

// A transform that rewrites vLLM's "32k"-style values of `flag` into plain integers.
inline CLI::Validator HumanReadableInt(const std::string& flag) {
  return CLI::Validator(
      [flag](std::string& value) -> std::string {
        auto parsed = ParseHumanReadableInt(flag, value);
        if (!parsed.ok()) return parsed.status().message();
        value = std::to_string(*parsed);
        return "";
      },
      "", "human-readable int");
}

}  // namespace tandem::apps
