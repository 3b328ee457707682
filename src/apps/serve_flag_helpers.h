// The two ways a `tandem serve` flag is declared (serve_flags.cpp, serve_flags_compat.cpp):
// Opt (a value) and Flag (a boolean with its --no- negation), each with env TANDEM_<NAME> and
// its default shown in --help; and the checks every number flag takes: IntRange for an integer,
// NumberRange for a floating-point one (never CLI11's Range / PositiveNumber: they print an int
// flag's bounds as 300-digit doubles and let NaN through, since NaN compares false).
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdint>
#include <string>

#include "apps/serve_flags.h"
#include "core/value_range.h"

namespace tandem::apps {

// OpenMP threads of one engine's forward pass (--num-threads): past the CPUs they only
// time-share them, and llama.cpp caps its --threads at 512 (GGML_MAX_N_THREADS); 100000 crashed
// the engine on its first request. A fixed bound, not the CPU count, so that one config file
// runs on every machine.
inline constexpr int64_t kMaxNumThreads = 1024;
// Processes one flag may start on this machine (TP ranks, local DP ranks, API servers).
inline constexpr int64_t kMaxProcessesPerFlag = 1024;
// DP ranks of a whole deployment, over all machines.
inline constexpr int64_t kMaxDataParallelSize = 65536;

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

// An integer flag in [min, max], checked on the text before CLI11 converts it, so that a value
// beyond the type gets the same message: "--max-num-seqs: must be an integer in [1, 65536], got
// '0'". --help shows the range.
inline CLI::Validator IntRange(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const auto parsed = ParseIntInRange(value, min, max);
        return parsed.ok() ? "" : parsed.status().message();
      },
      IntRangeText(min, max), "int range");
}

// A floating-point flag: a finite number in [min, max] ((min, max] when `min_exclusive`); NaN,
// inf and -inf refused by name: "--gpu-memory-utilization: must be a finite number in [0.01, 1],
// got 'nan'".
inline CLI::Validator NumberRange(double min, double max, bool min_exclusive = false) {
  return CLI::Validator(
      [min, max, min_exclusive](std::string& value) -> std::string {
        const auto parsed = ParseFiniteInRange(value, min, max, min_exclusive);
        return parsed.ok() ? "" : parsed.status().message();
      },
      NumberRangeText(min, max, min_exclusive), "number range");
}

}  // namespace tandem::apps
