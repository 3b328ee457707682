// WriteSafetensors: one file, or shards plus an index, read back by SafetensorsCheckpoint with
// every byte, dtype and shape; a producer of the wrong size is an error naming the tensor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "model/loader/safetensors_reader.h"
#include "model/loader/safetensors_writer.h"

namespace tandem::model {
namespace safetensors_writer_test {
namespace {

std::filesystem::path FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tandem_st_writer_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TensorToWrite Bytes(const std::string& name, const std::string& dtype, tensor::Shape shape,
                    uint64_t size, uint8_t fill) {
  return {name, dtype, shape, size, [size, fill]() -> Result<std::vector<uint8_t>> {
            std::vector<uint8_t> v(size);
            for (uint64_t i = 0; i < size; ++i) v[i] = static_cast<uint8_t>(fill + i);
            return v;
          }};
}

void ExpectReadBack(const std::filesystem::path& dir, const std::string& stem, size_t shards) {
  // SafetensorsCheckpoint::Open finds "model" and "quant_model_weights" stems.
  auto ckpt = SafetensorsCheckpoint::Open(dir.string());
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ((*ckpt)->num_shards(), shards);
  auto a = (*ckpt)->Bytes("a.weight");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->info->dtype, "I8");
  EXPECT_EQ(a->info->shape, (tensor::Shape{3, 5}));
  for (int i = 0; i < 15; ++i) EXPECT_EQ(a->data[i], static_cast<uint8_t>(7 + i));
  auto c = (*ckpt)->Bytes("c.weight_scale");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->info->shape, (tensor::Shape{3, 1}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(c->data[i], static_cast<uint8_t>(100 + i));
  (void)stem;
}

TEST(SafetensorsWriterTest, OneFileReadsBack) {
  const auto dir = FreshDir("one");
  std::vector<size_t> written;
  ASSERT_TRUE(WriteSafetensors(dir.string(), "model",
                               {Bytes("a.weight", "I8", {3, 5}, 15, 7),
                                Bytes("c.weight_scale", "F32", {3, 1}, 12, 100)},
                               1 << 20, [&](size_t i) { written.push_back(i); })
                  .ok());
  EXPECT_EQ(written, (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(std::filesystem::exists(dir / "model.safetensors"));
  ExpectReadBack(dir, "model", 1);
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsWriterTest, ShardsAndIndexReadBack) {
  const auto dir = FreshDir("shards");
  ASSERT_TRUE(WriteSafetensors(
                  dir.string(), "quant_model_weights",
                  {Bytes("a.weight", "I8", {3, 5}, 15, 7), Bytes("b.weight", "F32", {4}, 16, 50),
                   Bytes("c.weight_scale", "F32", {3, 1}, 12, 100)},
                  /*max_shard_bytes=*/20, nullptr)
                  .ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "quant_model_weights-00001-of-00003.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(dir / "quant_model_weights.safetensors.index.json"));
  ExpectReadBack(dir, "quant_model_weights", 3);
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsWriterTest, AProducerOfTheWrongSizeIsAnErrorNamingTheTensor) {
  const auto dir = FreshDir("bad");
  TensorToWrite bad = Bytes("x.weight", "F32", {2}, 8, 0);
  bad.bytes = 12;
  const Status s = WriteSafetensors(dir.string(), "model", {bad}, 1 << 20, nullptr);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tensor 'x.weight': produced 8 bytes for 12"), std::string::npos)
      << s.ToString();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace safetensors_writer_test
}  // namespace tandem::model
