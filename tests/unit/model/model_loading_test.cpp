// LoadModel / configs: errors a user sees for bad paths, unknown architectures, misshaped weights.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/config/model_config.h"
#include "model/model.h"

namespace tandem::model {
namespace model_loading_test {
namespace {

const std::string kShared = TANDEM_SHARED_DIR;

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tandem_load_test_" + std::to_string(::getpid())) / name;
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ModelConfigTest, ReadsHfLlamaConfig) {
  auto c = LlamaConfigFromHf(kShared + "/models/stories260k-hf");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hidden_size, 64);
  EXPECT_EQ(c->num_kv_heads, 4);
  EXPECT_EQ(c->intermediate_size, 172);
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_EQ(c->max_position_embeddings, 512);
}

TEST(ModelConfigTest, ReadsMoeGgufConfig) {
  auto g = GgufReader::Open(kShared + "/models/stories260k-moe-gguf/stories260K-moe8x4.gguf");
  ASSERT_TRUE(g.ok());
  auto c = LlamaConfigFromGguf(**g);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->num_experts, 8);
  EXPECT_EQ(c->num_experts_per_tok, 4);
  EXPECT_EQ(c->intermediate_size, 43);
  EXPECT_EQ(c->rope_theta, 10000.0f);
}

TEST(ModelConfigTest, OtherHfArchitectureIsInvalidArgumentNamingIt) {
  const auto dir = TempDir("qwen");
  std::ofstream(dir / "config.json") << R"({"architectures":["Qwen9ForCausalLM"],"hidden_size":8})";
  auto c = LlamaConfigFromHf(dir.string());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("Qwen9ForCausalLM"), std::string::npos);
}

TEST(LoadModelTest, MissingPathIsNotFound) {
  EXPECT_EQ(LoadModel("/nonexistent/model.gguf", {}).status().code(), StatusCode::kNotFound);
}

TEST(LoadModelTest, MisshapedTensorNamesItWithExpectedAndFoundShape) {
  // HF folder whose config claims a wider FFN than the weights hold.
  const auto dir = TempDir("misshaped");
  std::ifstream in(kShared + "/models/stories260k-hf/config.json");
  std::string config((std::istreambuf_iterator<char>(in)), {});
  config.replace(config.find("\"intermediate_size\": 172"), 24, "\"intermediate_size\": 180");
  std::ofstream(dir / "config.json") << config;
  std::filesystem::create_symlink(kShared + "/models/stories260k-hf/model.safetensors",
                                  dir / "model.safetensors");
  auto m = LoadModel(dir.string(), {});
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("model.layers.0.mlp.gate_proj.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[172, 64]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[180, 64]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace model_loading_test
}  // namespace tandem::model
