// MmapFile: a read-only memory map of a whole file (RAII: unmapped on destruction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace tandem::tensor {

class MmapFile {
 public:
  // Maps `path` read-only. Errors: kNotFound (no such file), kInvalidArgument (not a regular
  // file: a FIFO, a directory, a device; refused without blocking), kDataLoss (cannot open/map).
  // An empty file maps to data() == nullptr, size() == 0.
  static Result<std::unique_ptr<MmapFile>> Open(const std::string& path);
  ~MmapFile();
  MmapFile(const MmapFile&) = delete;
  MmapFile& operator=(const MmapFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MmapFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tandem::tensor
