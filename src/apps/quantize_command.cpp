#include "apps/quantize_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "model/loader/w8a8_quantizer.h"

namespace tandem::apps {
namespace {

void ShowProgress(size_t done, size_t total, bool tty) {
  const int width = 40;
  const int filled = static_cast<int>(width * done / (total == 0 ? 1 : total));
  if (tty) {
    std::fprintf(stderr, "\r[%s%s] %zu/%zu tensors", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done, total);
    if (done == total) std::fprintf(stderr, "\n");
  } else if (done == total || (done * 10 / total) != ((done - 1) * 10 / total)) {
    std::fprintf(stderr, "quantize: %zu/%zu tensors written\n", done, total);
  }
}

}  // namespace

int RunQuantizeCommand(int argc, char** argv) {
  CLI::App app(
      "tandem quantize: write an int8 W8A8_DYNAMIC copy of a Hugging Face checkpoint "
      "(per-channel symmetric int8 weights, per-token int8 activations at run time). "
      "Qwen3.5: q/k/v of the full-attention layers and the routed experts (the 397B recipe); "
      "other architectures: every *_proj Linear of the decoder layers. Embeddings, lm_head, "
      "norms, routers and mtp.* stay as stored",
      "tandem quantize");
  std::string src, out, format = "ascend", scheme = "w8a8-dynamic";
  std::vector<std::string> ignore;
  uint64_t max_shard = uint64_t{5} << 30;
  app.add_option("src", src, "Hugging Face folder to quantize (float: F32/BF16/F16)")->required();
  app.add_option("out", out, "output folder (created; must not hold a checkpoint)")->required();
  app.add_option("--format", format,
                 "ascend: msModelSlim layout (quant_model_description.json + "
                 "quant_model_weights.safetensors; vLLM-Ascend --quantization ascend) | "
                 "compressed-tensors: config.json quantization_config (vLLM)")
      ->capture_default_str()
      ->check(CLI::IsMember({"ascend", "compressed-tensors"}));
  app.add_option("--scheme", scheme,
                 "w8a8-dynamic (the only scheme: static W8A8 needs calibration data)")
      ->capture_default_str()
      ->check(CLI::IsMember({"w8a8-dynamic"}));
  app.add_option("--ignore", ignore,
                 "keep Linears matching this fnmatch pattern FLOAT (module or tensor name, e.g. "
                 "'*o_proj' or 'model.layers.0.*'); repeatable");
  app.add_option("--max-shard-size", max_shard, "bytes per output safetensors file (> 0)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  model::QuantizeOptions options;
  options.src_dir = src;
  options.out_dir = out;
  options.format =
      format == "ascend" ? model::QuantFormat::kAscend : model::QuantFormat::kCompressedTensors;
  options.ignore = ignore;
  options.max_shard_bytes = max_shard;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto start = std::chrono::steady_clock::now();
  auto report = model::QuantizeCheckpoint(
      options, [tty](size_t done, size_t total) { ShowProgress(done, total, tty); });
  if (!report.ok()) {
    std::fprintf(stderr, "tandem quantize: %s\n", report.status().ToString().c_str());
    return 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "quantized %lld Linears to int8 (W8A8_DYNAMIC, %s); %lld tensors kept as stored\n"
      "tensor bytes %.1f MiB -> %.1f MiB in %.1f s; wrote to %s:",
      static_cast<long long>(report->int8_linears), format.c_str(),
      static_cast<long long>(report->float_tensors), report->bytes_in / 1048576.0,
      report->bytes_out / 1048576.0, secs, out.c_str());
  for (const std::string& f : report->files) std::printf(" %s", f.c_str());
  std::printf("\n");
  return 0;
}

}  // namespace tandem::apps
