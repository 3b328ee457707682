// LoadModel: picks the reader and architecture from the path (directory → HF folder,
// *.gguf → GGUF file). Architectures: llama, qwen3, qwen3moe, qwen35moe (GGUF);
// LlamaForCausalLM, Qwen3ForCausalLM,
// Qwen3MoeForCausalLM, Qwen2MoeForCausalLM (HF, chosen by config.json architectures[0]).
// TP: LoadOptions' tp_rank/tp_size/tp_group become the TpContext every architecture shards by.
// dtype (--dtype, vLLM's names): "auto" keeps every Linear/Embedding weight in the dtype the file
// stores (F32/F16/BF16; docs/design/weight-dtypes.md); float32|float, bfloat16, float16|half
// convert those weights at load (CastingWeightSource). Activations are f32, except in the int8
// Linears of a W8A8 folder (msModelSlim / compressed-tensors, --quantization; W8A8WeightSource,
// docs/design/w8a8.md), whose activations are quantized per token.
#include <filesystem>
#include <optional>

#include "core/logging.h"
#include "core/step_profile.h"
#include "kernels/backend.h"
#include "kernels/ops.h"
#include "model/arch/llama.h"
#include "model/arch/qwen.h"
#include "model/arch/qwen35.h"
#include "model/config/hf_config.h"
#include "model/config/model_config.h"
#include "model/config/qwen35_config.h"
#include "model/config/qwen_config.h"
#include "model/layers/weight_matmul.h"
#include "model/loader/gguf_reader.h"
#include "model/loader/qwen35_gguf_source.h"
#include "model/loader/qwen3_gguf_source.h"
#include "model/loader/safetensors_reader.h"
#include "model/loader/w8a8_source.h"
#include "model/model.h"
#include "tensor/device.h"

namespace tandem::model {
namespace {

// The dtype --dtype converts weights to; nullopt for "auto" (as stored).
Result<std::optional<tensor::DType>> ParseDtype(const std::string& dtype) {
  if (dtype == "auto") {
    return std::optional<tensor::DType>();
  }
  if (dtype == "float32" || dtype == "float") {
    return std::optional(tensor::DType::kF32);
  }
  if (dtype == "bfloat16") {
    return std::optional(tensor::DType::kBF16);
  }
  if (dtype == "float16" || dtype == "half") {
    return std::optional(tensor::DType::kF16);
  }
  return InvalidArgument("--dtype '" + dtype +
                         "' is not supported; use auto, float32 (float), bfloat16 or float16 "
                         "(half)");
}

// `source`, or `source` converted to `cast` (kept alive in `holder`).
const WeightSource& Cast(const WeightSource& source, std::optional<tensor::DType> cast,
                         std::unique_ptr<CastingWeightSource>& holder) {
  if (!cast.has_value()) {
    return source;
  }
  holder = std::make_unique<CastingWeightSource>(source, *cast);
  TLOG_INFO("--dtype: Linear and embedding weights of {} converted to {} at load",
            source.source_name(), tensor::DTypeName(*cast));
  return *holder;
}

// The TP rank/size/group of `options`, checked against each other.
Result<TpContext> TpContextOf(const LoadOptions& o) {
  if (o.tp_size < 1 || o.tp_rank < 0 || o.tp_rank >= o.tp_size) {
    return InvalidArgument("tensor-parallel rank " + std::to_string(o.tp_rank) + " of size " +
                           std::to_string(o.tp_size) +
                           ": --tensor-parallel-size must be >= 1 and the rank in [0, size)");
  }
  if (o.tp_size > 1 && o.tp_group == nullptr) {
    return InvalidArgument("--tensor-parallel-size " + std::to_string(o.tp_size) +
                           " needs a TP process group (LoadOptions::tp_group is null)");
  }
  if (o.tp_group != nullptr &&
      (o.tp_group->size() != o.tp_size || o.tp_group->rank() != o.tp_rank)) {
    return InvalidArgument("TP process group is rank " + std::to_string(o.tp_group->rank()) +
                           " of " + std::to_string(o.tp_group->size()) + "; expected rank " +
                           std::to_string(o.tp_rank) + " of --tensor-parallel-size " +
                           std::to_string(o.tp_size));
  }
  TpContext tp{o.tp_rank, o.tp_size, o.tp_size > 1 ? o.tp_group : nullptr};
  if (o.ep_size > 1) {
    if (o.ep_group == nullptr || o.ep_group->size() != o.ep_size ||
        o.ep_group->rank() != o.ep_rank) {
      return InvalidArgument(
          "expert parallel rank " + std::to_string(o.ep_rank) + " of " + std::to_string(o.ep_size) +
          " needs an EP process group of that rank and size (" +
          (o.ep_group == nullptr ? std::string("none given")
                                 : "got rank " + std::to_string(o.ep_group->rank()) + " of " +
                                       std::to_string(o.ep_group->size())) +
          ")");
    }
    tp.ep = EpContext{o.ep_rank, o.ep_size, o.ep_group, o.tp_rank, o.tp_size};
  }
  return tp;
}

// The folder's checkpoint, seen through its W8A8 scheme when it has one (kept in `holder`).
Result<const WeightSource*> OpenQuantized(const SafetensorsCheckpoint& checkpoint,
                                          const std::string& dir, const std::string& requested,
                                          std::unique_ptr<W8A8WeightSource>& holder) {
  TANDEM_ASSIGN_OR_RETURN(const QuantFormat format, DetectQuantFormat(dir, requested));
  if (format == QuantFormat::kNone) {
    return &checkpoint;
  }
  TANDEM_ASSIGN_OR_RETURN(holder, W8A8WeightSource::Open(checkpoint, dir, format));
  TLOG_INFO("{}: {} int8 W8A8 Linears ({}, {})", dir, holder->num_int8_linears(),
            format == QuantFormat::kAscend ? "msModelSlim quant_model_description.json"
                                           : "compressed-tensors",
            requested.empty() ? std::string("detected") : "--quantization " + requested);
  return holder.get();
}

Result<std::unique_ptr<Model>> LoadHfFolder(const std::string& dir, const TpContext& tp,
                                            bool load_mtp, std::optional<tensor::DType> cast,
                                            const std::string& quantization) {
  std::unique_ptr<CastingWeightSource> holder;
  std::unique_ptr<W8A8WeightSource> quant_holder;
  TANDEM_ASSIGN_OR_RETURN(std::string arch, ReadHfArchitecture(dir));
  if (arch != "LlamaForCausalLM" && !IsQwen35Architecture(arch) && !IsQwenArchitecture(arch)) {
    return InvalidArgument("model folder '" + dir + "' names architecture '" + arch +
                           "' in config.json; supported: LlamaForCausalLM, Qwen3ForCausalLM, "
                           "Qwen3MoeForCausalLM, Qwen2MoeForCausalLM, "
                           "Qwen3_5MoeForConditionalGeneration, Qwen3_5MoeForCausalLM");
  }
  if (load_mtp && !IsQwen35Architecture(arch)) {
    return InvalidArgument("--speculative-config method mtp needs a model with MTP layers; '" +
                           dir + "' is " + arch);
  }
  // The checkpoint first: config.json's layer count is checked against the tensors it holds
  // before a typed config or a loader sizes anything by it.
  TANDEM_ASSIGN_OR_RETURN(auto checkpoint, SafetensorsCheckpoint::Open(dir));
  TANDEM_RETURN_IF_ERROR(CheckHfLayerCount(dir, checkpoint->TensorNames()));
  // The weights as the loaders see them (W8A8 and --dtype applied), after the typed config.
  const auto weights = [&]() -> Result<const WeightSource*> {
    TANDEM_ASSIGN_OR_RETURN(const WeightSource* source,
                            OpenQuantized(*checkpoint, dir, quantization, quant_holder));
    return &Cast(*source, cast, holder);
  };
  if (arch == "LlamaForCausalLM") {
    TANDEM_ASSIGN_OR_RETURN(LlamaConfig config, LlamaConfigFromHf(dir));
    TANDEM_ASSIGN_OR_RETURN(const WeightSource* source, weights());
    return LoadLlama(config, *source, WeightFormat::kHf, tp);
  }
  if (IsQwen35Architecture(arch)) {
    TANDEM_ASSIGN_OR_RETURN(Qwen35Config config, Qwen35ConfigFromHf(dir));
    TANDEM_ASSIGN_OR_RETURN(const WeightSource* source, weights());
    return LoadQwen35Moe(config, *source, tp, load_mtp);
  }
  TANDEM_ASSIGN_OR_RETURN(QwenConfig config, QwenConfigFromHf(dir));
  TANDEM_ASSIGN_OR_RETURN(const WeightSource* source, weights());
  if (arch == "Qwen3ForCausalLM") {
    return LoadQwen3(config, *source, tp);
  }
  if (arch == "Qwen3MoeForCausalLM") {
    return LoadQwen3Moe(config, *source, tp);
  }
  return LoadQwen2Moe(config, *source, tp);
}

// The K/V element type --kv-cache-dtype names (vLLM's values; "auto" = f32, our activations').
Result<tensor::DType> ParseKvCacheDtype(const std::string& name) {
  if (name == "auto" || name == "float32" || name == "float") {
    return tensor::DType::kF32;
  }
  if (name == "bfloat16") {
    return tensor::DType::kBF16;
  }
  if (name == "float16" || name == "half") {
    return tensor::DType::kF16;
  }
  if (name.rfind("fp8", 0) == 0) {
    return InvalidArgument("--kv-cache-dtype " + name +
                           ": fp8 KV caches have no CPU kernel; use auto, bfloat16 or float16");
  }
  return InvalidArgument("--kv-cache-dtype '" + name +
                         "' is not supported; use auto, float32, bfloat16 or float16");
}

Result<std::unique_ptr<Model>> LoadModelWeights(const std::string& path,
                                                const LoadOptions& options);

}  // namespace

Result<std::unique_ptr<Model>> LoadModel(const std::string& path, const LoadOptions& options) {
  TANDEM_ASSIGN_OR_RETURN(const tensor::DType kv_dtype, ParseKvCacheDtype(options.kv_cache_dtype));
  TANDEM_ASSIGN_OR_RETURN(const tensor::DeviceRequest device,
                          tensor::ParseDeviceFlag(options.device));
  TANDEM_ASSIGN_OR_RETURN(kernels::Backend * backend, kernels::BackendFor(device));
  // Every model runs on the CPU backend today (its weights are host memory); a backend whose
  // device is not the host would have to be handed to the architecture loaders.
  if (backend->device().kind != tensor::DeviceKind::kCpu) {
    return Unimplemented(std::string("--device ") + tensor::DeviceRequestName(device) +
                         ": models load into host memory only");
  }
  TLOG_INFO("device: {} (--device {})", backend->name(), tensor::DeviceRequestName(device));
  TANDEM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, LoadModelWeights(path, options));
  TANDEM_RETURN_IF_ERROR(model->SetKvCacheDtype(kv_dtype));
  return model;
}

namespace {

Result<std::unique_ptr<Model>> LoadModelWeights(const std::string& path,
                                                const LoadOptions& options) {
  namespace fs = std::filesystem;
  TANDEM_ASSIGN_OR_RETURN(const std::optional<tensor::DType> cast, ParseDtype(options.dtype));
  std::unique_ptr<CastingWeightSource> holder;
  TANDEM_ASSIGN_OR_RETURN(TpContext tp, TpContextOf(options));
  kernels::SetNumThreads(options.num_threads);
  if (options.q8_0_dot != "int8" && options.q8_0_dot != "float32") {
    return InvalidArgument("q8_0_dot '" + options.q8_0_dot + "': use int8 or float32");
  }
  SetQ8_0Dot(options.q8_0_dot == "int8" ? Q8_0Dot::kInt8 : Q8_0Dot::kFloat32);
  if (options.profile_steps > 0) {
    core::StepProfile::Enable(options.profile_steps);
  }
  if (options.cpu_binding_slot >= 0) {
    const int threads = kernels::NumThreads();
    TANDEM_ASSIGN_OR_RETURN(
        std::vector<int> cores,
        kernels::BindThreadsToCores(options.cpu_binding_slot * threads, threads));
    std::string list;
    for (int c : cores) {
      list += (list.empty() ? "" : ",") + std::to_string(c);
    }
    TLOG_INFO("enable_cpu_binding: {} threads pinned to CPUs {}", threads, list);
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return NotFound("model path '" + path + "' does not exist");
  }
  if (fs::is_directory(path, ec)) {
    return LoadHfFolder(path, tp, options.load_mtp, cast, options.quantization);
  }
  if (!options.quantization.empty()) {
    return InvalidArgument("--quantization " + options.quantization +
                           " names a W8A8 "
                           "safetensors format, but '" +
                           path +
                           "' is not a model folder (a GGUF "
                           "file carries its own quantization per tensor)");
  }
  if (fs::path(path).extension() == ".gguf") {
    TANDEM_ASSIGN_OR_RETURN(auto gguf, GgufReader::Open(path));
    const auto gguf_arch = gguf->GetString("general.architecture");
    if (gguf_arch.ok() && gguf_arch.value() == "qwen35moe") {
      TANDEM_ASSIGN_OR_RETURN(Qwen35Config config, Qwen35ConfigFromGguf(*gguf));
      const Qwen35GgufSource source(*gguf, config);
      return LoadQwen35Moe(config, Cast(source, cast, holder), tp, options.load_mtp);
    }
    if (options.load_mtp) {
      return InvalidArgument("--speculative-config method mtp needs a model with MTP layers; '" +
                             path + "' has none");
    }
    if (gguf_arch.ok() && (gguf_arch.value() == "qwen3" || gguf_arch.value() == "qwen3moe")) {
      TANDEM_ASSIGN_OR_RETURN(QwenConfig config, QwenConfigFromGguf(*gguf));
      const Qwen3GgufSource source(*gguf, config);
      const WeightSource& weights = Cast(source, cast, holder);
      if (gguf_arch.value() == "qwen3") {
        return LoadQwen3(config, weights, tp);
      }
      return LoadQwen3Moe(config, weights, tp);
    }
    TANDEM_ASSIGN_OR_RETURN(LlamaConfig config, LlamaConfigFromGguf(*gguf));
    return LoadLlama(config, Cast(*gguf, cast, holder), WeightFormat::kGguf, tp);
  }
  return InvalidArgument("model path '" + path +
                         "' is neither a folder (Hugging Face layout) nor a .gguf file");
}

}  // namespace

}  // namespace tandem::model
