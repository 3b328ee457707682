// Matmul: y = x · wᵀ through oneDNN, with one primitive per (m, n, k) kept for the process.
// Why cached: creating a oneDNN primitive costs ~10-100 µs (JIT), more than a decode-size GEMM.
// Why wᵀ via strides: weights stay in their row-major [out, in] file layout; oneDNN reads the
// logical [k, n] matrix with strides {1, k}, so no copy or reorder is made.
#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <mutex>
#include <tuple>

#include "core/check.h"
#include "kernels/cpu/matmul_internal.h"
#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

struct MatmulPrimitive {
  dnnl::memory::desc src_md;
  dnnl::memory::desc weights_md;
  dnnl::memory::desc dst_md;
  dnnl::matmul primitive;
};

class MatmulCache {
 public:
  // One cache per thread: oneDNN 2.x primitives share a library-managed scratchpad, so one
  // primitive executed from two threads at once (TP ranks as threads of one process, "local"
  // backend) corrupts each other's results unless built with DNNL_ENABLE_CONCURRENT_EXEC.
  static MatmulCache& Get() {
    static thread_local MatmulCache cache;
    return cache;
  }
  dnnl::engine& engine() { return engine_; }

  // Returns the primitive for (m, n, k) writing rows of y ldy floats apart, creating it on first
  // use (this thread's cache).
  const MatmulPrimitive& Lookup(int64_t m, int64_t n, int64_t k, int64_t ldy) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto key = std::make_tuple(m, n, k, ldy);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    // Bound the cache: prefill sizes vary; entries are cheap to rebuild.
    if (cache_.size() >= kMaxEntries) cache_.clear();
    using dt = dnnl::memory::data_type;
    MatmulPrimitive p;
    p.src_md = dnnl::memory::desc({m, k}, dt::f32, dnnl::memory::dims{k, 1});
    p.weights_md = dnnl::memory::desc({k, n}, dt::f32, dnnl::memory::dims{1, k});
    p.dst_md = dnnl::memory::desc({m, n}, dt::f32, dnnl::memory::dims{ldy, 1});
    dnnl::matmul::desc desc(p.src_md, p.weights_md, p.dst_md);
    dnnl::matmul::primitive_desc pd(desc, engine_);
    p.primitive = dnnl::matmul(pd);
    return cache_.emplace(key, std::move(p)).first->second;
  }

 private:
  static constexpr size_t kMaxEntries = 4096;
  MatmulCache() : engine_(dnnl::engine::kind::cpu, 0) {}
  dnnl::engine engine_;
  std::mutex mu_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, MatmulPrimitive> cache_;
};

}  // namespace

void Matmul(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k) {
  MatmulStrided(x, w, y, m, n, k, n);
}

void MatmulStrided(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
                   int64_t ldy) {
  TANDEM_CHECK(m >= 0 && n > 0 && k > 0 && ldy >= n)
      << "matmul shape m=" << m << " n=" << n << " k=" << k << " ldy=" << ldy;
  if (m == 0) return;
  MatmulCache& cache = MatmulCache::Get();
  const MatmulPrimitive& p = cache.Lookup(m, n, k, ldy);
  dnnl::engine& eng = cache.engine();
  thread_local dnnl::stream stream(eng);
  dnnl::memory src(p.src_md, eng, const_cast<float*>(x));
  dnnl::memory weights(p.weights_md, eng, const_cast<float*>(w));
  dnnl::memory dst(p.dst_md, eng, y);
  p.primitive.execute(stream,
                      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
  stream.wait();
}

void MatmulNaive(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(x[i * k + p]) * w[j * k + p];
      y[i * n + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace tandem::kernels
