// llama.cpp's GGUF of tiny-qwen3.5-moe (made by its own convert_hf_to_gguf.py) seen through
// Qwen35GgufSource equals the HF checkpoint tensor by tensor: every text and MTP tensor of
// model.safetensors has a counterpart under the same name (model.language_model.* as model.*),
// the same shape and the same values once the converter's transforms are undone (+1 on
// zero-centred norms, -exp(A_log), tiled value heads, split experts, squeezed conv1d; the MTP
// layer as blk.4 + nextn.*). Values are exact except where the undoing rounds: norms stored as
// f32(1 + w) and A_log through log(exp(.)).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/loader/gguf_reader.h"
#include "model/loader/qwen35_gguf_source.h"
#include "model/loader/safetensors_reader.h"

namespace tandem::model {
namespace qwen35_gguf_source_test {
namespace {

const std::string kDir = std::string(TANDEM_SHARED_DIR) + "/models/tiny-qwen3.5-moe";

// The tensor names in a safetensors file's header (8-byte little-endian length + JSON).
std::vector<std::string> SafetensorsNames(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t len = 0;
  in.read(reinterpret_cast<char*>(&len), sizeof(len));
  std::string header(len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(len));
  const nlohmann::json tensors = nlohmann::json::parse(header);
  std::vector<std::string> names;
  for (const auto& [name, _] : tensors.items()) {
    if (name != "__metadata__") names.push_back(name);
  }
  return names;
}

TEST(Qwen35GgufSourceTest, EveryHfTensorIncludingMtpEqualsTheGgufOne) {
  auto gguf = GgufReader::Open(kDir + "/tiny-qwen3.5-moe-f16.gguf");
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  auto config = Qwen35ConfigFromGguf(**gguf);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->num_layers, 4);
  EXPECT_EQ(config->mtp_num_hidden_layers, 1);
  const Qwen35GgufSource source(**gguf, *config);
  auto hf = SafetensorsCheckpoint::Open(kDir);
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  const std::string text_prefix = "model.language_model.";
  int compared = 0, mtp = 0, stored_f16 = 0;
  for (const std::string& name : SafetensorsNames(kDir + "/model.safetensors")) {
    const std::string as =
        name.rfind(text_prefix, 0) == 0 ? "model." + name.substr(text_prefix.size()) : name;
    SCOPED_TRACE(name);
    ASSERT_TRUE(source.HasTensor(as)) << "the GGUF source lacks " << as;
    auto want = (*hf)->ReadF32(name);
    auto got = source.ReadF32(as);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(want->shape(), got->shape());
    const bool rounded =
        as.find("norm") != std::string::npos || as.find("A_log") != std::string::npos;
    const float tolerance = rounded ? 1e-3f : 0.0f;
    for (int64_t i = 0; i < want->numel(); ++i) {
      ASSERT_LE(std::fabs(want->f32()[i] - got->f32()[i]), tolerance) << "element " << i;
    }
    // ReadStored: the same values, in the file's dtype wherever a Linear or the experts hold
    // the tensor (whole rows or head-wide column blocks reordered as stored).
    auto stored = source.ReadStored(as);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    ASSERT_EQ(stored->shape(), got->shape());
    const tensor::Tensor stored_f32 =
        stored->dtype() == tensor::DType::kF32 ? stored->Clone() : stored->ToF32();
    for (int64_t i = 0; i < want->numel(); ++i) {
      ASSERT_EQ(stored_f32.f32()[i], got->f32()[i]) << "element " << i << " as stored";
    }
    stored_f16 += stored->dtype() == tensor::DType::kF16;
    ++compared;
    mtp += name.rfind("mtp.", 0) == 0;
  }
  EXPECT_GE(compared, 90);  // 4 layers + embeddings + head + the MTP layer
  EXPECT_GE(mtp, 15);       // fc, 3 head norms, attention, router, experts, shared expert
  // Every F16 matrix of the file stays F16: embedding and lm_head (2), qkv/z/b/a/out of the 3
  // GDN layers (15), fused gate_up, down and the shared gate/up/down of the 4 + MTP layers (25),
  // q/k/v/o of layer 3 and the MTP layer (8), the MTP fc (1).
  EXPECT_EQ(stored_f16, 51);
}

}  // namespace
}  // namespace qwen35_gguf_source_test
}  // namespace tandem::model
