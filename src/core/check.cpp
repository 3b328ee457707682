#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace tandem::internal {

CheckFailure::CheckFailure(const char* cond, const char* file, int line) {
  stream_ << file << ":" << line << ": check failed: " << cond << ": ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", stream_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace tandem::internal
