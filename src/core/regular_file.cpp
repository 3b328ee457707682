#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tandem {
namespace {

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

Status OpenError(const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR) return NotFound("file '" + path + "' does not exist");
  return DataLoss("cannot open '" + path + "': " + std::strerror(err));
}

Status CheckMode(const std::string& path, mode_t mode) {
  if (S_ISREG(mode)) return Status::Ok();
  return InvalidArgument("'" + path + "' is not a regular file (" + FileKind(mode) + ")");
}

}  // namespace

Result<int> OpenRegularFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return OpenError(path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return OpenError(path, err);
  }
  if (Status mode = CheckMode(path, st.st_mode); !mode.ok()) {
    ::close(fd);
    return mode;
  }
  return fd;
}

Status CheckRegularFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return OpenError(path, errno);
  return CheckMode(path, st.st_mode);
}

Result<std::string> ReadRegularFile(const std::string& path) {
  TANDEM_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  std::string bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    bytes.reserve(static_cast<size_t>(st.st_size));  // one allocation (an 11 MB tokenizer.json)
  }
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return DataLoss("cannot read '" + path + "': " + std::strerror(err));
    }
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return bytes;
}

}  // namespace tandem
