// llama.cpp qwen3 / qwen3moe GGUFs: the shipped files load as Qwen3 models; metadata that
// contradicts the file or makes every logit NaN stops loading naming the key (a copy of
// tiny-qwen3-f16.gguf with one scalar value patched in place).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "model/model.h"

namespace tandem::model {
namespace qwen3_gguf_test {
namespace {

const std::string kGguf = std::string(TANDEM_SHARED_DIR) + "/models/tiny-qwen3/tiny-qwen3-f16.gguf";

// A copy of the file with the scalar value of metadata `key` replaced by the bytes of `value`.
template <typename T>
std::string Patched(const std::string& key, T value) {
  std::ifstream in(kGguf, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string needle(8, '\0');
  const uint64_t len = key.size();
  std::memcpy(needle.data(), &len, 8);
  needle += key;
  const auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  EXPECT_NE(it, bytes.end()) << key;
  const size_t at = (it - bytes.begin()) + needle.size() + 4;  // past the u32 value type
  std::memcpy(&bytes[at], &value, sizeof(T));
  const std::string path = ::testing::TempDir() + "qwen3_" + key + ".gguf";
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
  return path;
}

std::string LoadError(const std::string& path) {
  auto model = LoadModel(path, LoadOptions{});
  EXPECT_FALSE(model.ok()) << path;
  std::filesystem::remove(path);
  return model.ok() ? "" : model.status().message();
}

TEST(Qwen3GgufTest, ShippedFileLoadsAsQwen3) {
  auto model = LoadModel(kGguf, LoadOptions{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model.value()->info().architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(model.value()->info().num_layers, 3);
}

TEST(Qwen3GgufTest, BlockCountThatContradictsTheTensorsIsRefusedAtOnce) {
  for (uint32_t count : {2u, 1000000u}) {
    const std::string msg = LoadError(Patched("qwen3.block_count", count));
    EXPECT_NE(
        msg.find("qwen3.block_count = " + std::to_string(count) + " but tensors for 3 blocks"),
        std::string::npos)
        << msg;
  }
}

TEST(Qwen3GgufTest, NanOrNonPositiveEpsAndRopeThetaAreRefused) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::string eps = "qwen3.attention.layer_norm_rms_epsilon (rms_norm_eps) is ";
  EXPECT_NE(LoadError(Patched("qwen3.attention.layer_norm_rms_epsilon", nan)).find(eps + "nan"),
            std::string::npos);
  EXPECT_NE(LoadError(Patched("qwen3.attention.layer_norm_rms_epsilon", -1.0f)).find(eps + "-1;"),
            std::string::npos);
  EXPECT_NE(LoadError(Patched("qwen3.rope.freq_base", 0.0f))
                .find("qwen3.rope.freq_base (rope_theta) is 0; expected a finite number > 0"),
            std::string::npos);
}

}  // namespace
}  // namespace qwen3_gguf_test
}  // namespace tandem::model
