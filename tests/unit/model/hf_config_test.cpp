// A Hugging Face folder's config.json checked before anything is sized by it: the layer count
// against the checkpoint's tensors, integers that would wrap in int32, epsilons and RoPE bases
// that would make every logit NaN, and a config.json that is not a regular file.
#include "model/config/hf_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/config/config_json.h"
#include "model/config/qwen35_config.h"
#include "model/model.h"

namespace tandem::model {
namespace {

const std::vector<std::string> kFiveLayers = {
    "model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
    "model.layers.4.mlp.down_proj.weight", "model.layers.2.input_layernorm.weight",
    "model.norm.weight"};

TEST(HfConfigTest, CountsDecoderLayersByTheLargestIndexLeavingMtpLayersOut) {
  EXPECT_EQ(CountCheckpointLayers(kFiveLayers), 5);
  EXPECT_EQ(CountCheckpointLayers({"model.language_model.layers.3.mlp.gate.weight",
                                   "mtp.layers.0.mlp.gate.weight", "lm_head.weight"}),
            4);
  EXPECT_EQ(CountCheckpointLayers({"model.embed_tokens.weight", "model.sublayers.7.w",
                                   "model.layers.x.w", "model.layers.9"}),
            0);
}

TEST(HfConfigTest, LayerCountThatContradictsTheTensorsNamesTheFileAndBothCounts) {
  const auto config = nlohmann::json::parse(R"({"num_hidden_layers": 1000000000})");
  const Status st = CheckLayerCount("/m/config.json", config, kFiveLayers);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "'/m/config.json': num_hidden_layers is 1000000000 but the checkpoint holds tensors "
            "for 5 layers (layers.0 … layers.4); the two must agree");
  EXPECT_TRUE(CheckLayerCount("/m/config.json",
                              nlohmann::json::parse(R"({"num_hidden_layers": 5})"), kFiveLayers)
                  .ok());
}

TEST(HfConfigTest, LayerCountUnderTextConfigIsCheckedAndAnIllTypedOneIsLeftToTheTypedConfig) {
  const auto nested = nlohmann::json::parse(R"({"text_config": {"num_hidden_layers": 6}})");
  EXPECT_FALSE(CheckLayerCount("/m/config.json", nested, kFiveLayers).ok());
  const auto ill_typed = nlohmann::json::parse(R"({"num_hidden_layers": 1e9})");
  EXPECT_TRUE(CheckLayerCount("/m/config.json", ill_typed, kFiveLayers).ok());
}

TEST(ConfigJsonTest, IntegerBeyondInt32IsRefusedInsteadOfWrapping) {
  const ConfigJson cj("/m/config.json",
                      nlohmann::json::parse(R"({"a": 1000000000000, "b": -3000000000, "c": 7})"));
  int32_t out = 0;
  EXPECT_EQ(cj.Int("a", &out, std::nullopt).message(),
            "'/m/config.json': field 'a' is 1000000000000; expected an integer in [-2^31, 2^31-1]");
  EXPECT_FALSE(cj.Int("b", &out, std::nullopt).ok());
  ASSERT_TRUE(cj.Int("c", &out, std::nullopt).ok());
  EXPECT_EQ(out, 7);
}

TEST(ConfigJsonTest, PositiveFloatRefusesZeroNegativeBeyondFloatAndNonNumbers) {
  const ConfigJson cj(
      "/m/config.json",
      nlohmann::json::parse(
          R"({"zero": 0, "negative": -1e-6, "huge": 1e300, "text": "1e-6", "ok": 1e-6})"));
  float out = 1.0f;
  EXPECT_EQ(cj.PositiveFloat("zero", &out).message(),
            "'/m/config.json': field 'zero' is 0; expected a finite number > 0");
  EXPECT_FALSE(cj.PositiveFloat("negative", &out).ok());
  EXPECT_FALSE(cj.PositiveFloat("huge", &out).ok());  // inf as a float
  EXPECT_FALSE(cj.PositiveFloat("text", &out).ok());
  EXPECT_EQ(out, 1.0f);  // untouched by the refusals
  ASSERT_TRUE(cj.PositiveFloat("ok", &out).ok());
  EXPECT_FLOAT_EQ(out, 1e-6f);
  EXPECT_TRUE(cj.PositiveFloat("absent", &out).ok());
}

TEST(Qwen35ConfigTest, FullAttentionIntervalBelowOneIsRefusedNotADivisionByZero) {
  Qwen35Config c;
  c.num_layers = 8;
  EXPECT_EQ(c.SetLayerTypesByInterval(0).message(),
            "Qwen3.5 config: full_attention_interval is 0; expected >= 1 (every N-th layer is "
            "full attention)");
  ASSERT_TRUE(c.SetLayerTypesByInterval(4).ok());
  EXPECT_EQ(c.full_attention,
            std::vector<bool>({false, false, false, true, false, false, false, true}));
}

TEST(HfConfigTest, ConfigJsonThatIsAFifoIsRefusedWithoutBlocking) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tandem_hf_config_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "config.json").string();
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto model = LoadModel(dir.string(), LoadOptions{});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().message(), "'" + fifo + "' is not a regular file (a FIFO)");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tandem::model
