// How the agent turns an instance into a command line and an environment (MANAGER.md §4),
// as pure functions: entrypoint + run_command with {{placeholders}} filled, split like a POSIX
// shell (no shell is run), then the deployment's backend parameters in the backend's
// parameter format; environment layers; device visibility.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tandem::cluster::agent {

// Replaces each {{name}} (spaces inside the braces allowed) by values[name].
// Errors: kInvalidArgument naming an unknown placeholder or an unclosed "{{".
Result<std::string> RenderPlaceholders(std::string_view text,
                                       const std::map<std::string, std::string>& values);

// Splits `text` into words as a POSIX shell does, without expansions: blanks separate words;
// '…' is literal; "…" keeps blanks and honours \" \\ \$ \` and \newline; a backslash outside
// quotes escapes the next character; '#' at the start of a word begins a comment to the end
// of the line. Errors: kInvalidArgument for an unbalanced quote or a trailing backslash,
// naming the position.
Result<std::vector<std::string>> SplitPosixWords(std::string_view text);

// The words of a deployment's backend_parameters: each entry may hold several flags and a
// trailing '# comment' (the seed pastes them so), and is split with SplitPosixWords. Then
// rewritten to `parameter_format`: "space" makes "--flag=value" two words "--flag" "value";
// "equal" joins "--flag value" into "--flag=value" (a value is a word not starting with '-',
// or a negative number). Errors: SplitPosixWords's, naming the entry.
Result<std::vector<std::string>> BackendParameterWords(const std::vector<std::string>& entries,
                                                       const std::string& parameter_format);

// Whether `words` contain `--name` (or `--name=…`), with '_' and '-' treated alike after
// the leading "--" (vLLM accepts both spellings).
bool HasFlag(const std::vector<std::string>& words, std::string_view name);
// The value of `--name VALUE` or `--name=VALUE` (last one wins); "" when absent.
std::string FlagValue(const std::vector<std::string>& words, std::string_view name);

// The child's environment as NAME=VALUE strings: `base` (the agent's, minus TANDEM_AGENT_*),
// overridden in order by each of `layers` (backend defaults, version env, deployment env),
// then by `extra` (the device visibility variables). Sorted by name.
std::vector<std::string> BuildEnvironment(
    const std::map<std::string, std::string>& base,
    const std::vector<std::map<std::string, std::string>>& layers,
    const std::map<std::string, std::string>& extra);

// The variable that makes only `indexes` visible for a device type: cuda →
// CUDA_VISIBLE_DEVICES, cann (Ascend) → ASCEND_RT_VISIBLE_DEVICES, comma-joined; cpu → none
// (CPU devices are sockets, bound by affinity instead: CpusOfSockets).
std::map<std::string, std::string> VisibleDevicesEnv(const std::string& type,
                                                     const std::vector<int64_t>& indexes);

}  // namespace tandem::cluster::agent
