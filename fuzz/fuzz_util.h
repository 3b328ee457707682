// Helpers the fuzz targets share: an input as a file (the readers take paths), the shared models
// folder, and a failed invariant that libFuzzer reports as a crash with its input kept.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tandem::fuzz {

// Prints `what` and aborts: libFuzzer saves the input as crash-<sha1>.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

// One in-memory file (memfd) rewritten with each input; path() opens it as a regular file.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("tandem-fuzz", 0)) {
    if (fd_ < 0) Fail("memfd_create failed");
  }
  ~MemFile() { close(fd_); }
  // Replaces the content with `size` bytes of `data`; returns the path to open.
  std::string Write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)) {
      Fail("writing the memfd failed");
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

// TANDEM_SHARED_DIR (scripts/fuzz.sh sets it), else ../shared of the working directory.
inline std::string SharedDir() {
  const char* dir = std::getenv("TANDEM_SHARED_DIR");
  return dir != nullptr ? dir : "../shared";
}

}  // namespace tandem::fuzz
