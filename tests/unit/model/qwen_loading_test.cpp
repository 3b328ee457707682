// Qwen configs and loading errors: config.json fields and HF defaults, which layers are sparse,
// unknown architectures and missing/misshaped tensors named with expected vs found shape, dtype
// option; and the two layer behaviours Qwen adds (norm_topk_prob off, sigmoid-gated shared
// expert) checked against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "layer_harness.h"
#include "model/config/qwen_config.h"
#include "model/layers/moe.h"
#include "model/layers/shared_expert.h"
#include "model/model.h"

namespace tandem::model {
namespace qwen_loading_test {
namespace {

const std::string kShared = TANDEM_SHARED_DIR;

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tandem_qwen_test_" + std::to_string(::getpid())) / name;
  std::filesystem::create_directories(dir);
  return dir;
}

// A copy of `model`'s config.json with `from` replaced by `to`, next to a link to its weights.
std::string EditedFolder(const std::string& model, const std::string& name, const std::string& from,
                         const std::string& to) {
  const auto dir = TempDir(name);
  std::ifstream in(kShared + "/models/" + model + "/config.json");
  std::string config((std::istreambuf_iterator<char>(in)), {});
  const size_t at = config.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in " << model << "/config.json";
  if (at != std::string::npos) config.replace(at, from.size(), to);
  std::ofstream(dir / "config.json") << config;
  std::filesystem::remove(dir / "model.safetensors");
  std::filesystem::create_symlink(kShared + "/models/" + model + "/model.safetensors",
                                  dir / "model.safetensors");
  return dir.string();
}

TEST(QwenConfigTest, ReadsQwen3WithHeadDimFromConfigAndQkNorm) {
  auto c = QwenConfigFromHf(kShared + "/models/tiny-qwen3");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(c->hidden_size, 16);
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_EQ(c->num_kv_heads, 2);
  EXPECT_EQ(c->rope_theta, 1e6f);
  EXPECT_EQ(c->rms_norm_eps, 1e-6f);
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_TRUE(c->qk_norm);
  EXPECT_FALSE(c->qkv_bias);
  EXPECT_EQ(c->num_experts, 0);
  EXPECT_FALSE(c->IsSparseLayer(0));
}

TEST(QwenConfigTest, ReadsQwen3MoeRoutingFields) {
  auto c = QwenConfigFromHf(kShared + "/models/tiny-qwen3-moe");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->num_experts, 8);
  EXPECT_EQ(c->num_experts_per_tok, 2);
  EXPECT_EQ(c->moe_intermediate_size, 32);
  EXPECT_TRUE(c->norm_topk_prob);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_EQ(c->shared_expert_intermediate_size, 0);
  for (int l = 0; l < 3; ++l) EXPECT_TRUE(c->IsSparseLayer(l)) << l;
}

TEST(QwenConfigTest, ReadsQwen2MoeWithQkvBiasAndSharedExpert) {
  auto c = QwenConfigFromHf(kShared + "/models/stories260k-qwen2moe-hf");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->qkv_bias);
  EXPECT_FALSE(c->qk_norm);
  EXPECT_EQ(c->shared_expert_intermediate_size, 43);
  EXPECT_EQ(c->head_dim, 8);
}

TEST(QwenConfigTest, NormTopkProbDefaultsToFalseAsInHf) {
  const auto dir = EditedFolder("tiny-qwen3-moe", "no_norm", "\"norm_topk_prob\": true,", "");
  auto c = QwenConfigFromHf(dir);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->norm_topk_prob);
}

TEST(QwenConfigTest, SparseStepAndMlpOnlyLayersPickDenseLayers) {
  QwenConfig c;
  c.num_layers = 6;
  c.num_experts = 4;
  c.decoder_sparse_step = 2;
  c.mlp_only_layers = {3};
  // (l + 1) % 2 == 0 → 1, 3, 5 sparse; 3 listed as mlp-only.
  const std::vector<bool> want = {false, true, false, false, false, true};
  for (int l = 0; l < 6; ++l) EXPECT_EQ(c.IsSparseLayer(l), want[l]) << "layer " << l;
}

TEST(QwenConfigTest, MissingExpertCountIsInvalidArgumentNamingTheField) {
  const auto dir = EditedFolder("tiny-qwen3-moe", "no_experts", "\"num_experts\": 8,", "");
  auto c = QwenConfigFromHf(dir);
  ASSERT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("'num_experts'"), std::string::npos) << c.status().message();
}

TEST(QwenLoadTest, UnknownArchitectureIsInvalidArgumentNamingItAndTheSupportedOnes) {
  const auto dir = EditedFolder("tiny-qwen3", "unknown", "Qwen3ForCausalLM", "Qwen9ForCausalLM");
  auto m = LoadModel(dir, {});
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("Qwen9ForCausalLM"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Qwen3MoeForCausalLM"), std::string::npos) << msg;
}

TEST(QwenLoadTest, UntiedQwen3WithoutLmHeadNamesTheMissingTensor) {
  const auto dir = EditedFolder("tiny-qwen3", "untied", "\"tie_word_embeddings\": true",
                                "\"tie_word_embeddings\": false");
  auto m = LoadModel(dir, {});
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("'lm_head.weight' is missing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[151936, 16]"), std::string::npos) << msg;
}

TEST(QwenLoadTest, WrongHeadDimNamesQProjWithExpectedAndFoundShape) {
  const auto dir = EditedFolder("tiny-qwen3", "head_dim", "\"head_dim\": 16", "\"head_dim\": 8");
  auto m = LoadModel(dir, {});
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("model.layers.0.self_attn.q_proj.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[64, 16]"), std::string::npos) << msg;  // found
  EXPECT_NE(msg.find("[32, 16]"), std::string::npos) << msg;  // expected
}

TEST(QwenLoadTest, WrongExpertCountNamesTheRouterWithExpectedAndFoundShape) {
  const auto dir =
      EditedFolder("tiny-qwen3-moe", "experts", "\"num_experts\": 8", "\"num_experts\": 9");
  auto m = LoadModel(dir, {});
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("model.layers.0.mlp.gate.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[9, 8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[8, 8]"), std::string::npos) << msg;
}

TEST(QwenLoadTest, WrongSharedExpertWidthNamesTheSharedExpertTensor) {
  const auto dir =
      EditedFolder("stories260k-qwen2moe-hf", "shared", "\"shared_expert_intermediate_size\": 43",
                   "\"shared_expert_intermediate_size\": 44");
  auto m = LoadModel(dir, {});
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status().ToString();
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("model.layers.0.mlp.shared_expert.gate_proj.weight"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("[44, 64]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[43, 64]"), std::string::npos) << msg;
}

TEST(QwenLoadTest, RopeScalingIsUnimplemented) {
  const auto dir = EditedFolder("tiny-qwen3", "rope", "\"rope_scaling\": null",
                                "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0}");
  EXPECT_EQ(LoadModel(dir, {}).status().code(), StatusCode::kUnimplemented);
}

TEST(QwenLoadTest, DtypeBfloat16IsAcceptedAndOtherDtypesAreRefused) {
  LoadOptions bf16;
  bf16.dtype = "bfloat16";
  EXPECT_TRUE(LoadModel(kShared + "/models/tiny-qwen3", bf16).ok());
  LoadOptions int8;
  int8.dtype = "int8";
  auto m = LoadModel(kShared + "/models/tiny-qwen3", int8);
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("int8"), std::string::npos);
}

// One expert of width 1 on a 1-d input: gate = up = down = 1 → expert(x) = silu(x) · x.
// Router [[1], [0]] at x = 1: softmax = (e/(1+e), 1/(1+e)); top-1 picks expert 0.
TEST(QwenLayersTest, MoeWithoutNormTopkProbWeighsByTheRawSoftmaxProbability) {
  const float x = 1.0f;
  const float p0 = std::exp(1.0f) / (1.0f + std::exp(1.0f));
  const float expert = x / (1.0f + std::exp(-x)) * x;
  for (bool norm : {true, false}) {
    Moe moe({1.0f, 0.0f}, {1.0f, 1.0f}, {1.0f, 1.0f}, {1.0f, 1.0f}, /*num_experts=*/2,
            /*top_k=*/1, /*dim=*/1, /*ff=*/1, norm);
    float out = 0.0f;
    layer_testing::LayerHarness harness;
    moe.Forward(harness.stream(), layer_testing::Rows(&x, 1, 1), layer_testing::Rows(&out, 1, 1),
                harness.Arena(moe.scratch_bytes(1, harness.probe())));
    harness.ExpectReleased();
    EXPECT_NEAR(out, norm ? expert : p0 * expert, 1e-6f) << "norm_topk_prob " << norm;
  }
}

TEST(QwenLayersTest, SharedExpertIsScaledBySigmoidOfItsGateAndAdded) {
  // MLP of width 1: silu(2x) · 3x · 0.5; gate weight 0.25 → sigmoid(0.25 x).
  SharedExpert shared(Mlp({2.0f}, {3.0f}, {0.5f}, 1, 1), {0.25f}, 1);
  const float x = 1.5f;
  float out = 10.0f;
  layer_testing::LayerHarness harness;
  shared.AddForward(harness.stream(), layer_testing::Rows(&x, 1, 1),
                    layer_testing::Rows(&out, 1, 1),
                    harness.Arena(shared.scratch_bytes(1, harness.probe())));
  harness.ExpectReleased();
  const float mlp = (2 * x) / (1 + std::exp(-2 * x)) * (3 * x) * 0.5f;
  const float gate = 1.0f / (1.0f + std::exp(-0.25f * x));
  EXPECT_NEAR(out, 10.0f + gate * mlp, 1e-5f);
}

}  // namespace
}  // namespace qwen_loading_test
}  // namespace tandem::model
