// Transparent huge pages for large host buffers (tensors, packed weights).
//
// A buffer of gigabytes faulted in 4 KiB pages costs one page fault per 4 KiB; on a VM whose
// memory the host backs lazily each fault is expensive (measured here: 2 GB in 7.0 s with 4 KiB
// pages, 3.5 s with 2 MiB ones), and a model's load is mostly such faults. Advising the kernel
// before the first touch lets it fault 2 MiB at a time (Linux THP in "madvise" mode, the
// default of Debian and most distributions; in "always" mode this is a no-op, in "never" the
// advice is ignored). Decode also walks gigabytes of weights: fewer TLB misses.
#pragma once

#include <cstddef>

namespace tandem::tensor {

// Buffers at least this large are advised (smaller ones would not fill a huge page).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Advises [data, data + bytes) for transparent huge pages (madvise MADV_HUGEPAGE over the
// 2 MiB-aligned part of the range) before its pages are first touched. Best effort: no error
// when the range is small, the kernel lacks THP, or the platform is not Linux.
void AdviseHugePages(void* data, size_t bytes);

// `v` resized to `n` elements (value-initialised), its storage advised for huge pages before
// the first touch when it is large and newly allocated. For std::vector of a trivial type.
template <typename Vector>
void ResizeOnHugePages(Vector& v, size_t n) {
  if (n > v.capacity() && n * sizeof(typename Vector::value_type) >= kHugePageBytes) {
    Vector fresh;
    fresh.reserve(n);  // allocated, not yet touched (above glibc's mmap threshold, a fresh
                       // mapping; below it, possibly reused heap the advice cannot help)
    AdviseHugePages(fresh.data(), n * sizeof(typename Vector::value_type));
    fresh.assign(v.begin(), v.end());
    v.swap(fresh);
  }
  v.resize(n);
}

}  // namespace tandem::tensor
