#include "tensor/mmap_file.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/regular_file.h"

namespace tandem::tensor {

Result<std::unique_ptr<MmapFile>> MmapFile::Open(const std::string& path) {
  TANDEM_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));  // a FIFO would block open(2)
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return DataLoss("cannot stat '" + path + "': " + std::strerror(err));
  }
  std::unique_ptr<MmapFile> file(new MmapFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return DataLoss("cannot mmap '" + path + "': " + std::strerror(err));
    }
    file->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return file;
}

MmapFile::~MmapFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace tandem::tensor
