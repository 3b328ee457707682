#include "tensor/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tandem::tensor {

void AdviseHugePages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (data == nullptr || bytes < kHugePageBytes) {
    return;
  }
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  const uintptr_t last = (begin + bytes) & ~(uintptr_t{kHugePageBytes} - 1);
  if (last > first) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the aligned interior of our own buffer
    madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // best effort
  }
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace tandem::tensor
