// Where this process's ipc:// (Unix domain socket) endpoints live, and their files' life: one
// directory for every `tandem serve` process of a host ($VLLM_RPC_BASE_PATH, else $TMPDIR,
// else /tmp: vLLM's RPC base path, which defaults to Python's tempfile.gettempdir()), files
// named "tandem-<pid>-<name>" so that the files of a process that is gone can be told apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace tandem::ipc {

// The longest `name` MakeIpcEndpoint is given ("dp<rank>-tp-acks", "engine0-output", ...).
inline constexpr size_t kMaxIpcNameBytes = 32;

// The ipc socket directory: $VLLM_RPC_BASE_PATH if set and not empty, else $TMPDIR likewise,
// else "/tmp"; trailing slashes removed (a bare "/" stays "/").
std::string IpcDirectory();

// OK when IpcDirectory() is valid UTF-8, short enough that "<dir>/tandem-<pid>-<name>" fits a
// Unix socket path (107 bytes) for names up to kMaxIpcNameBytes, and a directory where this
// process can bind a socket (tried: "tandem-<pid>-probe", removed again). Errors:
// kInvalidArgument naming the variable that chose the directory, the directory (not when it is
// not UTF-8), and what is wrong (not UTF-8, too long: its length against the longest allowed,
// missing, not a directory, not writable, or the bind's error).
Status CheckIpcDirectory();

// A fresh ipc:// endpoint unique to this process: "ipc://<IpcDirectory()>/tandem-<pid>-<name>".
std::string MakeIpcEndpoint(const std::string& name);

// Removes the socket files MakeIpcEndpoint made in `directory` ("tandem-<pid>-*") whose process
// no longer exists (a crashed or killed `tandem serve`), if they are sockets owned by this
// user. Returns how many were removed. Never fails (an unreadable directory removes none).
int32_t RemoveStaleIpcFiles(const std::string& directory);

// Removes the socket file of an ipc:// endpoint (nothing for other transports). Connections
// already made stay up; call once every peer has connected, or at shutdown.
void RemoveIpcPath(const std::string& endpoint);

}  // namespace tandem::ipc
