// LoadModel: picks the reader and architecture from the path (directory → HF folder,
// *.gguf → GGUF file). Architectures: llama (GGUF), LlamaForCausalLM (HF).
#include <filesystem>

#include "kernels/ops.h"
#include "model/arch/llama.h"
#include "model/config/model_config.h"
#include "model/loader/gguf_reader.h"
#include "model/loader/safetensors_reader.h"
#include "model/model.h"

namespace tandem::model {

Result<std::unique_ptr<Model>> LoadModel(const std::string& path, const LoadOptions& options) {
  namespace fs = std::filesystem;
  if (options.dtype != "auto" && options.dtype != "float32") {
    return InvalidArgument("dtype '" + options.dtype + "' is not supported; use auto or float32");
  }
  kernels::SetNumThreads(options.num_threads);
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("model path '" + path + "' does not exist");
  if (fs::is_directory(path, ec)) {
    TANDEM_ASSIGN_OR_RETURN(LlamaConfig config, LlamaConfigFromHf(path));
    TANDEM_ASSIGN_OR_RETURN(auto checkpoint, SafetensorsCheckpoint::Open(path));
    return LoadLlama(config, *checkpoint, WeightFormat::kHf);
  }
  if (fs::path(path).extension() == ".gguf") {
    TANDEM_ASSIGN_OR_RETURN(auto gguf, GgufReader::Open(path));
    TANDEM_ASSIGN_OR_RETURN(LlamaConfig config, LlamaConfigFromGguf(*gguf));
    return LoadLlama(config, *gguf, WeightFormat::kGguf);
  }
  return InvalidArgument("model path '" + path +
                         "' is neither a folder (Hugging Face layout) nor a .gguf file");
}

}  // namespace tandem::model
