#include "apps/bench/gemm_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>

namespace tandem::apps::bench {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

constexpr size_t kMinRotatedWeightBytes = size_t{512} << 20;
constexpr double kMinTimingWindowS = 0.1;

std::vector<float> RandomFloats(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// C[M,N] = A[M,K] · W where w_nk is [N, K] row-major.
void NaiveMatmul(const GemmShape& s, const float* a, const float* w_nk, float* c) {
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      float acc = 0;
      for (int p = 0; p < s.k; ++p) acc += a[size_t(i) * s.k + p] * w_nk[size_t(j) * s.k + p];
      c[size_t(i) * s.n + j] = acc;
    }
  }
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A oneDNN matmul primitive with its memories; weights_nk is [N, K] row-major.
struct OnednnMatmul {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul primitive;
  dnnl::memory src, dst;
  std::vector<dnnl::memory> weights;  // rotated copies

  OnednnMatmul(const GemmShape& s, bool packed, const std::vector<float>& a,
               const std::vector<float>& w_nk, int num_copies) {
    const dnnl::memory::dim m = s.m, k = s.k, n = s.n;
    dnnl::memory::desc src_md({m, k}, dt::f32, tag::ab);
    dnnl::memory::desc dst_md({m, n}, dt::f32, tag::ab);
    dnnl::memory::desc w_plain_md({k, n}, dt::f32, tag::ba);  // [K,N] view of [N,K] storage
    dnnl::memory::desc w_md = packed ? dnnl::memory::desc({k, n}, dt::f32, tag::any) : w_plain_md;
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, w_md, dst_md), engine);
    primitive = dnnl::matmul(pd);
    src = dnnl::memory(pd.src_desc(), engine, const_cast<float*>(a.data()));
    dst = dnnl::memory(pd.dst_desc(), engine);
    dnnl::memory w_plain(w_plain_md, engine, const_cast<float*>(w_nk.data()));
    for (int c = 0; c < num_copies; ++c) {
      dnnl::memory w(pd.weights_desc(), engine);
      dnnl::reorder(w_plain, w).execute(stream, w_plain, w);
      weights.push_back(w);
    }
    stream.wait();
  }

  void Run(size_t copy_idx) {
    primitive.execute(stream, {{DNNL_ARG_SRC, src},
                               {DNNL_ARG_WEIGHTS, weights[copy_idx % weights.size()]},
                               {DNNL_ARG_DST, dst}});
    stream.wait();
  }
};

GemmResult MakeResult(const GemmShape& s, const char* impl, const char* layout, double seconds) {
  GemmResult r;
  r.shape = s;
  r.impl = impl;
  r.weight_layout = layout;
  r.seconds = seconds;
  r.gflop_per_s = 2.0 * s.m * double(s.k) * s.n / seconds / 1e9;
  r.weight_gb_per_s = double(s.k) * s.n * sizeof(float) / seconds / 1e9;
  return r;
}

}  // namespace

Result<GemmResult> BenchOnednnMatmul(const GemmShape& shape, bool packed_weights, int repeats) {
  try {
    const size_t weight_bytes = size_t(shape.k) * shape.n * sizeof(float);
    const int num_copies =
        static_cast<int>(std::max<size_t>(1, (kMinRotatedWeightBytes + weight_bytes - 1) / weight_bytes));
    std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 1);
    std::vector<float> w = RandomFloats(size_t(shape.n) * shape.k, 2);
    OnednnMatmul mm(shape, packed_weights, a, w, num_copies);
    size_t call = 0;
    mm.Run(call++);  // warm-up: first-call JIT and page faults
    double best = 1e30;
    for (int r = 0; r < std::max(1, repeats); ++r) {
      int calls = 0;
      auto t0 = std::chrono::steady_clock::now();
      do {
        mm.Run(call++);
        ++calls;
      } while (SecondsSince(t0) < kMinTimingWindowS);
      best = std::min(best, SecondsSince(t0) / calls);
    }
    return MakeResult(shape, "onednn", packed_weights ? "packed" : "nk", best);
  } catch (const dnnl::error& e) {
    return Internal(fmt::format("oneDNN matmul M={} K={} N={} ({} weights) failed: {}", shape.m,
                                shape.k, shape.n, packed_weights ? "packed" : "nk", e.what()));
  }
}

GemmResult BenchNaiveMatmul(const GemmShape& shape, int repeats) {
  std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 1);
  std::vector<float> w = RandomFloats(size_t(shape.n) * shape.k, 2);
  std::vector<float> c(size_t(shape.m) * shape.n);
  double best = 1e30;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    NaiveMatmul(shape, a.data(), w.data(), c.data());
    best = std::min(best, SecondsSince(t0));
  }
  return MakeResult(shape, "naive", "nk", best);
}

Result<double> MatmulMaxAbsDiff(const GemmShape& shape) {
  try {
    std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 3);
    std::vector<float> w = RandomFloats(size_t(shape.n) * shape.k, 4);
    std::vector<float> expected(size_t(shape.m) * shape.n);
    NaiveMatmul(shape, a.data(), w.data(), expected.data());
    OnednnMatmul mm(shape, /*packed=*/true, a, w, 1);
    mm.Run(0);
    const float* got = static_cast<const float*>(mm.dst.get_data_handle());
    double max_diff = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      max_diff = std::max(max_diff, double(std::fabs(got[i] - expected[i])));
    }
    return max_diff;
  } catch (const dnnl::error& e) {
    return Internal(fmt::format("oneDNN matmul M={} K={} N={} failed: {}", shape.m, shape.k,
                                shape.n, e.what()));
  }
}

}  // namespace tandem::apps::bench
