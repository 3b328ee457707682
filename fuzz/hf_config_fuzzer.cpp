// Fuzzes a Hugging Face folder's config.json: ReadHfConfigJson, ReadHfArchitecture, the typed
// configs (LlamaConfigFromHf, QwenConfigFromHf, Qwen35ConfigFromHf: every field's type and
// range) and CheckLayerCount, on arbitrary bytes written as <tmp>/config.json.
// Invariants beyond "no crash, no UB, no leak": a typed config that is accepted has positive
// layer, head and vocab counts (nothing later is sized by a zero or a negative value), and its
// layer count equals the layers of the checkpoint it is checked against.
// Seeds: every config.json and generation_config.json under ../shared/models.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "model/config/hf_config.h"
#include "model/config/model_config.h"
#include "model/config/qwen35_config.h"
#include "model/config/qwen_config.h"

namespace {

std::string MakeTempDir() {
  char pattern[] = "/tmp/tandem-fuzz-config-XXXXXX";
  if (mkdtemp(pattern) == nullptr) tandem::fuzz::Fail("mkdtemp failed");
  return pattern;
}

template <typename Config>
void CheckCounts(const char* which, const Config& c) {
  if (c.num_layers < 1 || c.num_heads < 1 || c.num_kv_heads < 1 || c.vocab_size < 1 ||
      c.hidden_size < 1) {
    tandem::fuzz::Fail(std::string(which) + " accepted a count < 1");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = MakeTempDir();
  static const std::string path = dir + "/config.json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) {
    tandem::fuzz::Fail("writing " + path + " failed");
  }
  auto json = tandem::model::ReadHfConfigJson(dir);
  if (!json.ok()) return 0;
  (void)tandem::model::ReadHfArchitecture(dir);
  const std::vector<std::string> two_layers = {"model.layers.0.mlp.up_proj.weight",
                                               "model.layers.1.mlp.up_proj.weight"};
  const bool two_ok = tandem::model::CheckLayerCount(path, *json, two_layers).ok();
  if (auto llama = tandem::model::LlamaConfigFromHf(dir); llama.ok()) {
    CheckCounts("LlamaConfigFromHf", *llama);
    if (!json->contains("text_config") && two_ok != (llama->num_layers == 2)) {
      tandem::fuzz::Fail("CheckLayerCount disagrees with num_hidden_layers");
    }
  }
  if (auto qwen = tandem::model::QwenConfigFromHf(dir); qwen.ok()) CheckCounts("Qwen", *qwen);
  (void)tandem::model::Qwen35ConfigFromHf(dir);
  return 0;
}
