#include "apps/bench/gemm_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>

#include "kernels/ops.h"
#include "model/layers/weight_matmul.h"
#include "model/loader/w8a8_quantizer.h"
#include "tensor/tensor.h"

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

// C[M,N] = A[M,K] · W where w_nk is [N, K] row-major; f32 accumulation, no blocking.
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

// Copies of a weight of `weight_bytes` that together exceed kMinRotatedWeightBytes, at most
// kMaxWeightCopies: a degenerate shape (K = 1) would otherwise make millions of copies (and, for
// the packed oneDNN variant, millions of memory objects: 10 GB for K = 1, N = 64); such tiny
// weights are then read from cache, which the table's W GB/s shows.
constexpr size_t kMaxWeightCopies = 4096;
int CopiesFor(size_t weight_bytes) {
  return static_cast<int>(std::clamp<size_t>(
      (kMinRotatedWeightBytes + weight_bytes - 1) / weight_bytes, 1, kMaxWeightCopies));
}

int NumWeightCopies(const GemmShape& s) { return CopiesFor(size_t(s.k) * s.n * sizeof(float)); }

// Best over `repeats` of the mean time of run(call_idx) over a >= 0.1 s window, after a warm-up.
double TimeBest(int repeats, const std::function<void(size_t)>& run) {
  size_t call = 0;
  run(call++);
  double best = 1e30;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    int calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    do {
      run(call++);
      ++calls;
    } while (SecondsSince(t0) < kMinTimingWindowS);
    best = std::min(best, SecondsSince(t0) / calls);
  }
  return best;
}

// A oneDNN matmul whose weights were reordered once into the primitive's preferred layout.
struct PackedOnednnMatmul {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul primitive;
  dnnl::memory src, dst;
  std::vector<dnnl::memory> weights;  // rotated copies

  PackedOnednnMatmul(const GemmShape& s, const std::vector<float>& a,
                     const std::vector<float>& w_nk, int num_copies) {
    const dnnl::memory::dim m = s.m, k = s.k, n = s.n;
    dnnl::memory::desc src_md({m, k}, dt::f32, tag::ab);
    dnnl::memory::desc dst_md({m, n}, dt::f32, tag::ab);
    dnnl::memory::desc w_plain_md({k, n}, dt::f32, tag::ba);  // [K,N] view of [N,K] storage
    dnnl::memory::desc w_any_md({k, n}, dt::f32, tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, w_any_md, dst_md), engine);
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

GemmResult MakeResult(const GemmShape& s, const char* impl, double seconds) {
  GemmResult r;
  r.shape = s;
  r.impl = impl;
  r.seconds = seconds;
  r.gflop_per_s = 2.0 * s.m * double(s.k) * s.n / seconds / 1e9;
  r.weight_gb_per_s = double(s.k) * s.n * sizeof(float) / seconds / 1e9;
  return r;
}

double MaxAbsDiff(const float* got, const std::vector<float>& expected) {
  double max_diff = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    max_diff = std::max(max_diff, double(std::fabs(got[i] - expected[i])));
  }
  return max_diff;
}

}  // namespace

GemmResult BenchTandemMatmul(const GemmShape& shape, int repeats) {
  const int num_copies = NumWeightCopies(shape);
  const size_t weight_count = size_t(shape.n) * shape.k;
  std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 1);
  std::vector<float> w = RandomFloats(weight_count, 2);
  std::vector<float> copies(weight_count * num_copies);
  for (int c = 0; c < num_copies; ++c)
    std::copy(w.begin(), w.end(), copies.begin() + c * weight_count);
  std::vector<float> y(size_t(shape.m) * shape.n);
  double best = TimeBest(repeats, [&](size_t call) {
    kernels::Matmul(a.data(), copies.data() + (call % num_copies) * weight_count, y.data(), shape.m,
                    shape.n, shape.k);
  });
  return MakeResult(shape, "tandem", best);
}

namespace {

// W [n, k] (random in [-1, 1]) encoded in `dtype`: element types by their conversions, Q8_0 by
// ggml's reference quantization (d = max|x| / 127, q = round(x / d)).
std::vector<unsigned char> EncodeWeights(const std::vector<float>& w, tensor::DType dtype) {
  std::vector<unsigned char> out(tensor::DTypeBytes(dtype, static_cast<int64_t>(w.size())));
  if (dtype == tensor::DType::kQ8_0) {
    for (size_t b = 0; b < w.size() / 32; ++b) {
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(w[b * 32 + j]));
      const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      const uint16_t dh = tensor::FloatToHalf(d);
      std::memcpy(&out[b * 34], &dh, 2);
      for (int j = 0; j < 32; ++j) {
        out[b * 34 + 2 + j] =
            static_cast<unsigned char>(static_cast<int8_t>(std::round(w[b * 32 + j] * id)));
      }
    }
    return out;
  }
  const size_t elem = tensor::DTypeSize(dtype);
  for (size_t i = 0; i < w.size(); ++i) {
    const uint16_t h =
        dtype == tensor::DType::kF16 ? tensor::FloatToHalf(w[i]) : tensor::FloatToBFloat16(w[i]);
    std::memcpy(&out[i * elem], dtype == tensor::DType::kF32 ? static_cast<const void*>(&w[i]) : &h,
                elem);
  }
  return out;
}

}  // namespace

GemmResult BenchTypedMatmul(const GemmShape& shape, tensor::DType dtype, int repeats) {
  const size_t weight_count = size_t(shape.n) * shape.k;
  std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 1);
  const std::vector<unsigned char> encoded = EncodeWeights(RandomFloats(weight_count, 2), dtype);
  const size_t weight_bytes = encoded.size();
  const int num_copies = CopiesFor(weight_bytes);
  std::vector<unsigned char> copies(weight_bytes * num_copies);
  for (int c = 0; c < num_copies; ++c) {
    std::memcpy(&copies[c * weight_bytes], encoded.data(), weight_bytes);
  }
  std::vector<float> y(size_t(shape.m) * shape.n);
  double best = TimeBest(repeats, [&](size_t call) {
    kernels::MatmulTyped(a.data(), copies.data() + (call % num_copies) * weight_bytes, dtype,
                         y.data(), shape.m, shape.n, shape.k);
  });
  std::string impl = std::string("typed-") + tensor::DTypeName(dtype);
  std::transform(impl.begin(), impl.end(), impl.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  GemmResult r = MakeResult(shape, "", best);
  r.impl = impl;
  r.weight_gb_per_s = double(weight_bytes) / best / 1e9;
  return r;
}

namespace {

// Times model::MultiplyWeight on `base` packed at load (model::PlanWeight), the way a Linear
// holds it, over packed copies rotating through >= 512 MiB as the other rows;
// weight_gb_per_s counts `weight_bytes` per multiply.
GemmResult TimePackedWeight(const GemmShape& shape, const tensor::Tensor& base,
                            const std::vector<float>& a, size_t weight_bytes, const char* impl,
                            int repeats) {
  const int num_copies = CopiesFor(weight_bytes);
  std::vector<model::Int8WeightPlan> plans;
  for (int c = 0; c < num_copies; ++c) plans.push_back(model::PlanWeight(base));
  const tensor::Tensor shape_only = model::DropPackedBytes(base, plans.front());
  std::vector<float> y(size_t(shape.m) * shape.n);
  const double best = TimeBest(repeats, [&](size_t call) {
    model::MultiplyWeight(shape_only, plans[call % num_copies], a.data(), y.data(), shape.m, 0,
                          shape.n);
  });
  GemmResult r = MakeResult(shape, impl, best);
  r.weight_gb_per_s = double(weight_bytes) / best / 1e9;
  return r;
}

}  // namespace

GemmResult BenchInt8Matmul(const GemmShape& shape, int repeats) {
  const size_t weight_count = size_t(shape.n) * shape.k;
  std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 1);
  const std::vector<float> w = RandomFloats(weight_count, 2);
  tensor::Tensor base({shape.n, shape.k}, tensor::DType::kI8);
  auto quant = std::make_shared<tensor::Int8Quant>();
  quant->row_scale.resize(shape.n);
  model::QuantizeRowsPerChannelInt8(w.data(), shape.n, shape.k,
                                    static_cast<int8_t*>(base.mutable_raw()),
                                    quant->row_scale.data());
  base.set_int8_quant(quant);
  return TimePackedWeight(shape, base, a, weight_count + 4 * size_t(shape.n), "w8a8-int8", repeats);
}

GemmResult BenchQ8_0Int8Matmul(const GemmShape& shape, int repeats) {
  const size_t weight_count = size_t(shape.n) * shape.k;
  std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 1);
  const std::vector<unsigned char> encoded =
      EncodeWeights(RandomFloats(weight_count, 2), tensor::DType::kQ8_0);
  const tensor::Tensor base =
      tensor::Tensor::View({shape.n, shape.k}, tensor::DType::kQ8_0, encoded.data());
  return TimePackedWeight(shape, base, a, encoded.size(), "q8_0-int8", repeats);
}

Result<GemmResult> BenchOnednnPackedMatmul(const GemmShape& shape, int repeats) {
  try {
    std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 1);
    std::vector<float> w = RandomFloats(size_t(shape.n) * shape.k, 2);
    PackedOnednnMatmul mm(shape, a, w, NumWeightCopies(shape));
    double best = TimeBest(repeats, [&](size_t call) { mm.Run(call); });
    return MakeResult(shape, "onednn-packed", best);
  } catch (const dnnl::error& e) {
    return Internal(fmt::format("oneDNN packed matmul M={} K={} N={} failed: {}", shape.m, shape.k,
                                shape.n, e.what()));
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
  return MakeResult(shape, "naive", best);
}

Result<MatmulCheck> CheckMatmulsAgainstNaive(const GemmShape& shape) {
  std::vector<float> a = RandomFloats(size_t(shape.m) * shape.k, 3);
  std::vector<float> w = RandomFloats(size_t(shape.n) * shape.k, 4);
  std::vector<float> expected(size_t(shape.m) * shape.n);
  NaiveMatmul(shape, a.data(), w.data(), expected.data());
  MatmulCheck check;
  std::vector<float> y(expected.size());
  kernels::Matmul(a.data(), w.data(), y.data(), shape.m, shape.n, shape.k);
  check.tandem_max_abs_diff = MaxAbsDiff(y.data(), expected);
  try {
    PackedOnednnMatmul mm(shape, a, w, 1);
    mm.Run(0);
    check.onednn_packed_max_abs_diff =
        MaxAbsDiff(static_cast<const float*>(mm.dst.get_data_handle()), expected);
  } catch (const dnnl::error& e) {
    return Internal(fmt::format("oneDNN packed matmul M={} K={} N={} failed: {}", shape.m, shape.k,
                                shape.n, e.what()));
  }
  return check;
}

}  // namespace tandem::apps::bench
