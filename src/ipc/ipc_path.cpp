#include "ipc/ipc_path.h"

#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/utf8.h"

namespace tandem::ipc {
namespace {

struct IpcDirectoryChoice {
  std::string directory;
  const char* variable;  // the environment variable that chose it; nullptr for the default
};

IpcDirectoryChoice ChooseIpcDirectory() {
  for (const char* variable : {"VLLM_RPC_BASE_PATH", "TMPDIR"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0') {
      continue;
    }
    std::string directory(value);
    while (directory.size() > 1 && directory.back() == '/') {
      directory.pop_back();
    }
    return {directory, variable};
  }
  return {"/tmp", nullptr};
}

}  // namespace

std::string IpcDirectory() { return ChooseIpcDirectory().directory; }

Status CheckIpcDirectory() {
  const IpcDirectoryChoice choice = ChooseIpcDirectory();
  const std::string from = choice.variable != nullptr
                               ? std::string(choice.variable) + "=" + choice.directory
                               : "the default " + choice.directory;
  // "<dir>/tandem-<pid>-<name>": a pid takes up to 10 digits; sun_path holds a NUL too.
  constexpr size_t kFixed = std::string_view("/tandem-").size() + 10 + 1 + kMaxIpcNameBytes;
  constexpr size_t kLongest = sizeof(sockaddr_un::sun_path) - 1 - kFixed;
  if (!IsValidUtf8(choice.directory)) {
    // The engine processes get their endpoints as JSON, which holds UTF-8 only.
    return InvalidArgument("the ipc socket directory (" +
                           std::string(choice.variable != nullptr ? choice.variable : "/tmp") +
                           ") is not valid UTF-8: choose another");
  }
  if (choice.directory.size() > kLongest) {
    return InvalidArgument("the ipc socket directory (" + from + ") is " +
                           std::to_string(choice.directory.size()) +
                           " bytes long; a Unix socket path allows a directory of at most " +
                           std::to_string(kLongest) + " bytes here: choose a shorter one");
  }
  struct stat st {};
  if (::stat(choice.directory.c_str(), &st) != 0) {
    return InvalidArgument("the ipc socket directory (" + from + ") does not exist");
  }
  if (!S_ISDIR(st.st_mode)) {
    return InvalidArgument("the ipc socket directory (" + from + ") is not a directory");
  }
  if (::access(choice.directory.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgument("the ipc socket directory (" + from + ") is not writable by this user");
  }
  // A socket bound there for real: access() lets root through where a bind still fails (a
  // read-only mount, /proc).
  const std::string probe = choice.directory + (choice.directory == "/" ? "" : "/") + "tandem-" +
                            std::to_string(getpid()) + "-probe";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    return InvalidArgument(std::string("cannot create a Unix socket: ") + strerror(errno));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, probe.c_str(), probe.size() + 1);
  const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  const int bind_errno = errno;
  ::close(fd);
  if (!bound) {
    return InvalidArgument("the ipc socket directory (" + from +
                           ") takes no socket: " + strerror(bind_errno));
  }
  ::unlink(probe.c_str());
  return Status::Ok();
}

std::string MakeIpcEndpoint(const std::string& name) {
  const std::string directory = IpcDirectory();
  return "ipc://" + directory + (directory == "/" ? "" : "/") + "tandem-" +
         std::to_string(getpid()) + "-" + name;
}

int32_t RemoveStaleIpcFiles(const std::string& directory) {
  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) {
    return 0;
  }
  int32_t removed = 0;
  const uid_t uid = getuid();
  while (const dirent* entry = readdir(dir)) {
    // "tandem-<pid>-<name>" (MakeIpcEndpoint's): a socket whose process is gone.
    const std::string_view file(entry->d_name);
    if (file.rfind("tandem-", 0) != 0) {
      continue;
    }
    const size_t digits_end = file.find('-', 7);
    if (digits_end == std::string_view::npos || digits_end == 7) {
      continue;
    }
    const std::string digits(file.substr(7, digits_end - 7));
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (::kill(pid, 0) == 0 || errno != ESRCH) {  // alive (or not ours to probe)
      continue;
    }
    const std::string path = directory + "/" + std::string(file);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != uid) {
      continue;
    }
    if (::unlink(path.c_str()) == 0) {
      ++removed;
    }
  }
  closedir(dir);
  return removed;
}

void RemoveIpcPath(const std::string& endpoint) {
  constexpr std::string_view kScheme = "ipc://";
  if (endpoint.rfind(kScheme, 0) == 0) {
    ::unlink(endpoint.c_str() + kScheme.size());
  }
}

}  // namespace tandem::ipc
