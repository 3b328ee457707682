// SafetensorsReader / SafetensorsCheckpoint on the real stories260k-hf folder, on synthetic
// files (F16/BF16, shards) and on corrupted headers.
#include "model/loader/safetensors_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/loader/gguf_reader.h"

namespace tandem::model {
namespace safetensors_reader_test {
namespace {

const std::string kShared = TANDEM_SHARED_DIR;
const std::string kHfDir = kShared + "/models/stories260k-hf";

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tandem_st_test_" + std::to_string(::getpid())) / name;
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes a safetensors file from a JSON header string and raw data bytes.
std::string WriteSafetensors(const std::filesystem::path& path, const std::string& header,
                             const std::vector<uint8_t>& data, uint64_t header_len_override = 0) {
  std::ofstream out(path, std::ios::binary);
  const uint64_t len = header_len_override != 0 ? header_len_override : header.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(header.data(), header.size());
  out.write(reinterpret_cast<const char*>(data.data()), data.size());
  return path.string();
}

TEST(SafetensorsReaderTest, ReadsStories260kHfFolder) {
  auto ckpt = SafetensorsCheckpoint::Open(kHfDir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ((*ckpt)->num_shards(), 1u);
  auto shape = (*ckpt)->TensorShape("model.layers.0.mlp.down_proj.weight");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(*shape, (tensor::Shape{64, 172}));
  EXPECT_FALSE((*ckpt)->HasTensor("lm_head.weight"));  // tied
  auto single = SafetensorsReader::Open(kHfDir + "/model.safetensors");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ((*single)->tensors().size(), 47u);
  // Same values as the GGUF the folder was derived from (embeddings are not permuted).
  auto embd = (*ckpt)->ReadF32("model.embed_tokens.weight");
  auto gguf = GgufReader::Open(kShared + "/models/stories260k/stories260K.gguf");
  ASSERT_TRUE(embd.ok() && gguf.ok());
  auto ref = (*gguf)->ReadF32("token_embd.weight");
  ASSERT_EQ(embd->numel(), ref->numel());
  EXPECT_EQ(std::memcmp(embd->f32(), ref->f32(), embd->size_bytes()), 0);
}

TEST(SafetensorsReaderTest, ConvertsF16AndBf16) {
  const auto dir = TempDir("dtypes");
  std::vector<uint8_t> data = {0x00, 0x3c, 0x00, 0xc0, 0xc0, 0x3f};  // f16 1, -2; bf16 1.5
  const std::string path = WriteSafetensors(
      dir / "m.safetensors",
      R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[4,6]},"__metadata__":{"format":"pt"}})",
      data);
  auto r = SafetensorsReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->metadata().at("format"), "pt");
  auto h = (*r)->ReadF32("h");
  EXPECT_EQ(h->f32()[0], 1.0f);
  EXPECT_EQ(h->f32()[1], -2.0f);
  EXPECT_EQ((*r)->ReadF32("b")->f32()[0], 1.5f);
}

TEST(SafetensorsReaderTest, ShardedCheckpointFollowsIndex) {
  const auto dir = TempDir("sharded");
  std::vector<uint8_t> one(4), two(4);
  const float a = 1.0f, b = 2.0f;
  std::memcpy(one.data(), &a, 4);
  std::memcpy(two.data(), &b, 4);
  WriteSafetensors(dir / "model-00001-of-00002.safetensors",
                   R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", one);
  WriteSafetensors(dir / "model-00002-of-00002.safetensors",
                   R"({"b":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}})", two);
  std::ofstream(dir / "model.safetensors.index.json")
      << R"({"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})";
  auto ckpt = SafetensorsCheckpoint::Open(dir.string());
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ((*ckpt)->num_shards(), 2u);
  EXPECT_EQ((*ckpt)->ReadF32("a")->f32()[0], 1.0f);
  EXPECT_EQ((*ckpt)->ReadF32("b")->f32()[0], 2.0f);
  EXPECT_EQ(*(*ckpt)->TensorShape("b"), (tensor::Shape{1, 1}));
}

struct BadHeaderCase {
  const char* what;
  std::string header;
  size_t data_bytes;
  uint64_t header_len_override;
  const char* expect_in_message;
};

TEST(SafetensorsReaderTest, CorruptHeadersAreDataLossNamingFileAndTensor) {
  const auto dir = TempDir("corrupt");
  const std::vector<BadHeaderCase> cases = {
      {"header_len", R"({})", 0, 1ull << 50, "header length"},
      {"not_json", R"({"a": [)", 0, 0, "JSON"},
      {"dtype", R"({"w":{"dtype":"Q9","shape":[1],"data_offsets":[0,4]}})", 4, 0, "'w'"},
      {"size", R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 24, 0, "'w'"},
      {"range", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 16, 0, "'w'"},
      {"overlap",
       R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
       12, 0, "overlap"},
      {"fields", R"({"w":{"dtype":"F32","shape":[1]}})", 4, 0, "'w'"},
  };
  for (const auto& c : cases) {
    const std::string path =
        WriteSafetensors(dir / (std::string(c.what) + ".safetensors"), c.header,
                         std::vector<uint8_t>(c.data_bytes), c.header_len_override);
    auto r = SafetensorsReader::Open(path);
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << c.what;
    EXPECT_NE(r.status().message().find(path), std::string::npos)
        << c.what << ": " << r.status().message();
    EXPECT_NE(r.status().message().find(c.expect_in_message), std::string::npos)
        << c.what << ": " << r.status().message();
  }
  // Shorter than the 8-byte length prefix.
  std::ofstream(dir / "tiny.safetensors") << "abc";
  EXPECT_EQ(SafetensorsReader::Open((dir / "tiny.safetensors").string()).status().code(),
            StatusCode::kDataLoss);
}

TEST(SafetensorsReaderTest, FolderWithoutWeightsIsNotFound) {
  EXPECT_EQ(SafetensorsCheckpoint::Open(TempDir("empty").string()).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace safetensors_reader_test
}  // namespace tandem::model
