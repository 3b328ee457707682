#include "apps/bench/kernels_bench.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "apps/bench/gemm_bench.h"
#include "apps/bench/memory_bandwidth.h"
#include "kernels/ops.h"

namespace tandem::apps::bench {
namespace {

nlohmann::json GemmJson(const GemmResult& r) {
  return {{"impl", r.impl},
          {"m", r.shape.m},
          {"k", r.shape.k},
          {"n", r.shape.n},
          {"seconds", r.seconds},
          {"gflop_per_s", r.gflop_per_s},
          {"weight_gb_per_s", r.weight_gb_per_s}};
}

}  // namespace

Status KernelsBenchConfig::Validate() const {
  if (bandwidth_mib < 512) {
    return InvalidArgument(fmt::format(
        "--bandwidth-mib must be >= 512 so buffers exceed every cache; found {}", bandwidth_mib));
  }
  if (repeats < 1) return InvalidArgument(fmt::format("--repeats must be >= 1; found {}", repeats));
  if (num_threads < 0) {
    return InvalidArgument(fmt::format("--threads must be >= 0; found {}", num_threads));
  }
  if (gemm_m.empty() || gemm_k < 1 || gemm_n < 1) {
    return InvalidArgument("--gemm-m needs at least one value and --gemm-k/--gemm-n must be >= 1");
  }
  for (int m : gemm_m) {
    if (m < 1) return InvalidArgument(fmt::format("--gemm-m values must be >= 1; found {}", m));
    if (int64_t{m} * gemm_k > (int64_t{1} << 28)) {
      return InvalidArgument(
          fmt::format("--gemm-m {} x --gemm-k {} exceeds 2^28 activation "
                      "values (1 GiB of f32)",
                      m, gemm_k));
    }
  }
  // One f32 copy of W must fit in 1 GiB (the timers keep several; K = 2^31 - 1 aborted).
  if (int64_t{gemm_k} * gemm_n > (int64_t{1} << 28)) {
    return InvalidArgument(
        fmt::format("--gemm-k {} x --gemm-n {} exceeds 2^28 weights (1 GiB "
                    "of f32)",
                    gemm_k, gemm_n));
  }
  return Status::Ok();
}

Status RunKernelsBench(const KernelsBenchConfig& config) {
  TANDEM_RETURN_IF_ERROR(config.Validate());
  nlohmann::json out;
  const int threads = config.num_threads > 0
                          ? config.num_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  std::printf("%s\n", fmt::format("{:=^78}", " Memory bandwidth ").c_str());
  BandwidthResult bw = MeasureMemoryBandwidth(config.bandwidth_mib << 20, threads, config.repeats);
  std::printf("buffer %zu MiB, %d threads, best of %d\n", bw.buffer_bytes >> 20, bw.num_threads,
              bw.repeats);
  std::printf("%-40s %10.2f\n", "Read bandwidth (GB/s):", bw.read_gb_per_s);
  std::printf("%-40s %10.2f\n", "Copy bandwidth (GB/s, read+write):", bw.copy_gb_per_s);
  out["memory"] = {{"buffer_bytes", bw.buffer_bytes},
                   {"num_threads", bw.num_threads},
                   {"repeats", bw.repeats},
                   {"read_gb_per_s", bw.read_gb_per_s},
                   {"copy_gb_per_s", bw.copy_gb_per_s}};

  const GemmShape small{config.naive_m, config.naive_k, config.naive_n};
  std::printf("%s\n", fmt::format("{:=^78}", " GEMM f32 ").c_str());
  GemmResult naive = BenchNaiveMatmul(small, config.repeats);
  TANDEM_ASSIGN_OR_RETURN(MatmulCheck check, CheckMatmulsAgainstNaive(small));
  GemmResult small_tandem = BenchTandemMatmul(small, config.repeats);
  std::printf(
      "naive baseline (1 thread, i-j-k) M=%d K=%d N=%d: %.2f GFLOP/s; tandem same shape: "
      "%.2f GFLOP/s (x%.1f)\n",
      small.m, small.k, small.n, naive.gflop_per_s, small_tandem.gflop_per_s,
      small_tandem.gflop_per_s / naive.gflop_per_s);
  std::printf("max |C - naive C|: tandem %.2e, onednn-packed %.2e\n", check.tandem_max_abs_diff,
              check.onednn_packed_max_abs_diff);
  out["naive_baseline"] = GemmJson(naive);
  out["naive_baseline_tandem"] = GemmJson(small_tandem);
  out["tandem_max_abs_diff"] = check.tandem_max_abs_diff;
  out["onednn_packed_max_abs_diff"] = check.onednn_packed_max_abs_diff;

  std::printf("typed matmul SIMD path: %s; int8 (W8A8) matmul path: %s\n",
              kernels::MatmulTypedIsa(), kernels::MatmulInt8Isa());
  std::printf("%-6s %-6s %-6s %-14s %10s %9s %9s %9s %9s\n", "M", "K", "N", "impl", "ms", "GFLOP/s",
              "x naive", "W GB/s", "roofline");
  nlohmann::json gemms = nlohmann::json::array();
  for (int m : config.gemm_m) {
    const GemmShape shape{m, config.gemm_k, config.gemm_n};
    GemmResult tandem = BenchTandemMatmul(shape, config.repeats);
    TANDEM_ASSIGN_OR_RETURN(GemmResult packed, BenchOnednnPackedMatmul(shape, config.repeats));
    std::vector<GemmResult> rows = {tandem, packed};
    for (tensor::DType d :
         {tensor::DType::kF32, tensor::DType::kF16, tensor::DType::kBF16, tensor::DType::kQ8_0}) {
      if (d == tensor::DType::kQ8_0 && config.gemm_k % 32 != 0) continue;  // whole blocks only
      rows.push_back(BenchTypedMatmul(shape, d, config.repeats));
    }
    rows.push_back(BenchInt8Matmul(shape, config.repeats));
    if (kernels::MatmulQ8_0Int8Available() && config.gemm_k % 32 == 0) {
      rows.push_back(BenchQ8_0Int8Matmul(shape, config.repeats));
    }
    for (const GemmResult& r : rows) {
      const double vs_naive = r.gflop_per_s / naive.gflop_per_s;
      // Roofline: weight streaming at the read bandwidth for decode sizes, the prepacked oneDNN
      // f32 GEMM of the same shape for prefill sizes.
      const bool decode = m <= kernels::kFusedMatmulMaxRows;
      const double roofline =
          decode ? r.weight_gb_per_s / bw.read_gb_per_s : r.gflop_per_s / packed.gflop_per_s;
      std::printf("%-6d %-6d %-6d %-14s %10.3f %9.1f %9.1f %9.2f %8.2f%s\n", m, config.gemm_k,
                  config.gemm_n, r.impl.c_str(), r.seconds * 1e3, r.gflop_per_s, vs_naive,
                  r.weight_gb_per_s, roofline, decode ? "b" : "g");
      nlohmann::json j = GemmJson(r);
      j["speedup_vs_naive"] = vs_naive;
      j[decode ? "weight_bw_fraction" : "packed_gemm_fraction"] = roofline;
      gemms.push_back(std::move(j));
    }
  }
  out["gemm"] = std::move(gemms);
  std::printf(
      "W GB/s = weight bytes (K*N*dtype size) / time. roofline: 'b' = W GB/s over the "
      "read bandwidth above (decode sizes, M <= %lld; ~1.0 = memory-bound optimum), "
      "'g' = GFLOP/s over onednn-packed f32 at the same shape (prefill sizes)\n",
      static_cast<long long>(kernels::kFusedMatmulMaxRows));

  if (!config.json_path.empty()) {
    std::ofstream file(config.json_path);
    if (!file) {
      return InvalidArgument(fmt::format("--json '{}': cannot open for writing", config.json_path));
    }
    file << out.dump(2) << "\n";
    std::printf("Saved result to %s\n", config.json_path.c_str());
  }
  return Status::Ok();
}

}  // namespace tandem::apps::bench
