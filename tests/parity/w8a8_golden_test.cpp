// W8A8 checkpoints (docs/design/w8a8.md) against the goldens of ../shared/models/*w8a8*
// (PROVENANCE.md of each folder states the arithmetic):
// - linear_level_vectors: single int8 Linears loaded through the real loader — x_q and s_x
//   exactly, y bit for bit — including exact .5 ties, the all-zero row and clamped rows;
// - end to end: every golden case's 32 greedy ids exactly and the top-5 logprobs of the first
//   4 positions within the golden's exact-arithmetic tolerance (1e-3), for msModelSlim
//   W8A8_DYNAMIC and static W8A8 (stories260K), compressed-tensors (tiny Qwen3) and the
//   397B recipe on the tiny Qwen3.5-MoE (int8 q/k/v and per-expert int8 experts);
// - refusals: --quantization mismatches and unknown type strings name the tensor and type.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "golden_cases.h"
#include "kernels/ops.h"
#include "model/arch/qwen35.h"
#include "model/config/qwen35_config.h"
#include "model/layers/linear.h"
#include "model/loader/safetensors_reader.h"
#include "model/loader/w8a8_source.h"
#include "model/model.h"
#include "testing.h"

namespace tandem::model {
namespace w8a8_golden_test {
namespace {

using testing::GreedyRunner;
using testing::LoadQwenCases;
using testing::MakeQwenSeq;
using testing::QwenCase;
using testing::Seq;

const std::string kShared = TANDEM_SHARED_DIR;
const std::string kDynamic = kShared + "/models/stories260k-w8a8";
const std::string kStatic = kShared + "/models/stories260k-w8a8-static";
const std::string kCt = kShared + "/models/tiny-qwen3-w8a8-ct";
const std::string kQwen35 = kShared + "/models/tiny-qwen3.5-moe-w8a8";

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// Every linear_level_vectors row of `dir`: quantize x as the Linear's scheme says, compare x_q
// (and s_x), then Linear::Forward's y bit for bit.
void ExpectLinearLevelVectors(const std::string& dir) {
  auto checkpoint = SafetensorsCheckpoint::Open(dir);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  auto format = DetectQuantFormat(dir, "");
  ASSERT_TRUE(format.ok()) << format.status().ToString();
  auto source = W8A8WeightSource::Open(**checkpoint, dir, *format);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const std::string path = dir + "/golden.json";
  const nlohmann::json golden = testing::LoadGoldenJson(path);
  int rows_checked = 0;
  for (const auto& lin : testing::RequireCases(golden, "linear_level_vectors.linears", path)) {
    const std::string name = lin["linear"];
    auto weight = (*source)->ReadStored(name + ".weight");
    ASSERT_TRUE(weight.ok()) << name << ": " << weight.status().ToString();
    ASSERT_NE(weight->int8_quant(), nullptr) << name << " was not read as int8";
    const tensor::Int8Quant quant = *weight->int8_quant();
    const Linear linear(std::move(weight).value());
    const int64_t k = lin["in_features"], n = lin["out_features"];
    ASSERT_EQ(linear.in_features(), k);
    ASSERT_EQ(linear.out_features(), n);
    for (const auto& row : testing::RequireCases(lin, "rows", path)) {
      std::vector<float> x;
      for (const auto& v : row["x"]) x.push_back(static_cast<float>(v.get<double>()));
      ASSERT_EQ(static_cast<int64_t>(x.size()), k);
      std::vector<int8_t> x_q(k);
      if (quant.activation == tensor::Int8Quant::Activation::kDynamicPerToken) {
        float s_x = 0;
        kernels::QuantizeRowsDynamicInt8(x.data(), 1, k, x_q.data(), &s_x);
        EXPECT_TRUE(SameBits(s_x, static_cast<float>(row["s_x"].get<double>())))
            << name << " (" << row["what"] << "): s_x " << s_x << " vs " << row["s_x"];
      } else {
        kernels::QuantizeRowsStaticInt8(x.data(), 1, k, quant.input_scale, quant.input_offset,
                                        x_q.data());
      }
      EXPECT_EQ(std::vector<int>(x_q.begin(), x_q.end()), row["x_q"].get<std::vector<int>>())
          << name << " (" << row["what"] << ")";
      std::vector<float> y(n);
      linear.Forward(x.data(), y.data(), 1);
      for (int64_t j = 0; j < n; ++j) {
        const auto want = static_cast<float>(row["y"][j].get<double>());
        ASSERT_TRUE(SameBits(y[j], want))
            << name << " (" << row["what"] << ") y[" << j << "] = " << y[j] << ", golden " << want;
      }
      ++rows_checked;
    }
  }
  EXPECT_GE(rows_checked, 8) << dir;
}

TEST(W8A8LinearLevel, DynamicStories260kIsBitExact) { ExpectLinearLevelVectors(kDynamic); }
TEST(W8A8LinearLevel, StaticStories260kIsBitExact) { ExpectLinearLevelVectors(kStatic); }
TEST(W8A8LinearLevel, CompressedTensorsQwen3IsBitExact) { ExpectLinearLevelVectors(kCt); }
TEST(W8A8LinearLevel, Qwen35MoeAttentionAndExpertsAreBitExact) {
  ExpectLinearLevelVectors(kQwen35);
}

// Each case alone, logprobs within the golden's exact-arithmetic tolerance (1e-3).
void ExpectGoldenCases(const std::string& dir) { testing::ExpectGoldenOneByOne(dir); }

TEST(W8A8Golden, DynamicStories260kMatchesEveryCase) { ExpectGoldenCases(kDynamic); }
TEST(W8A8Golden, StaticStories260kMatchesEveryCase) { ExpectGoldenCases(kStatic); }
TEST(W8A8Golden, CompressedTensorsQwen3MatchesEveryCase) { ExpectGoldenCases(kCt); }
TEST(W8A8Golden, Qwen35MoeRecipeMatchesEveryCase) { ExpectGoldenCases(kQwen35); }

// `inner` with vLLM-Ascend's remapped keys: model.language_model.X → language_model.model.X,
// lm_head.weight → language_model.lm_head.weight.
class AscendKeysSource : public WeightSource {
 public:
  explicit AscendKeysSource(const WeightSource& inner) : inner_(inner) {}
  const std::string& source_name() const override { return inner_.source_name(); }
  bool HasTensor(const std::string& name) const override {
    const std::string n = Inner(name);
    return !n.empty() && inner_.HasTensor(n);
  }
  Result<tensor::Shape> TensorShape(const std::string& name) const override {
    return inner_.TensorShape(Inner(name));
  }
  Result<tensor::Tensor> ReadF32(const std::string& name) const override {
    return inner_.ReadF32(Inner(name));
  }
  Result<tensor::Tensor> ReadStored(const std::string& name) const override {
    return inner_.ReadStored(Inner(name));
  }

 private:
  // "" for a name in the original layout (hidden, so only the remapped keys exist).
  static std::string Inner(const std::string& name) {
    const std::string remapped = "language_model.model.";
    if (name.rfind(remapped, 0) == 0) return "model.language_model." + name.substr(remapped.size());
    if (name == "language_model.lm_head.weight") return "lm_head.weight";
    if (name.rfind("model.", 0) == 0 || name == "lm_head.weight") return "";
    return name;  // mtp.*
  }
  const WeightSource& inner_;
};

TEST(W8A8Loading, VllmAscendKeyPrefixLoadsTheSameModel) {
  auto checkpoint = SafetensorsCheckpoint::Open(kQwen35);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  auto source = W8A8WeightSource::Open(**checkpoint, kQwen35, QuantFormat::kAscend);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const AscendKeysSource renamed(**source);
  ASSERT_TRUE(renamed.HasTensor("language_model.model.embed_tokens.weight"));
  ASSERT_FALSE(renamed.HasTensor("model.language_model.embed_tokens.weight"));
  auto config = Qwen35ConfigFromHf(kQwen35);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto model = LoadQwen35Moe(*config, renamed, TpContext{0, 1, nullptr}, /*load_mtp=*/false);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const QwenCase c = LoadQwenCases(kQwen35).front();
  GreedyRunner runner(**model, /*stop=*/-1, /*num_blocks=*/128);
  std::vector<Seq> seqs = {MakeQwenSeq(c)};
  runner.Run(seqs, /*chunk=*/0, /*collect_all_logits=*/false);
  EXPECT_EQ(seqs[0].generated, c.generated_ids) << c.name;
}

TEST(W8A8Loading, QuantizationFlagMustMatchTheFolder) {
  LoadOptions options;
  options.quantization = "compressed-tensors";
  auto loaded = LoadModel(kDynamic, options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("--quantization compressed-tensors does not match"),
            std::string::npos)
      << loaded.status().ToString();
  options.quantization = "ascend";
  EXPECT_TRUE(LoadModel(kDynamic, options).ok());
  auto float_folder = LoadModel(kShared + "/models/stories260k-hf", options);
  ASSERT_FALSE(float_folder.ok());
  EXPECT_NE(float_folder.status().message().find("which is none"), std::string::npos)
      << float_folder.status().ToString();
}

}  // namespace
}  // namespace w8a8_golden_test
}  // namespace tandem::model
