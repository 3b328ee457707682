// GgufReader on the real stories260K.gguf, on synthetic files covering every metadata type and
// tensor type, and on corrupted copies (each must give a Status naming file/tensor, not crash).
#include "model/loader/gguf_reader.h"
#include "model/loader/qwen35_gguf_source.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace tandem::model {
namespace gguf_reader_test {
namespace {

const std::string kGguf = std::string(TANDEM_SHARED_DIR) + "/models/stories260k/stories260K.gguf";

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string WriteTemp(const std::string& name, const std::vector<uint8_t>& bytes) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tandem_gguf_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

// Offset of the tensor-info record of `name` (its u64 length prefix) in a GGUF file.
size_t FindTensorInfo(const std::vector<uint8_t>& bytes, const std::string& name) {
  std::vector<uint8_t> needle(8);
  const uint64_t len = name.size();
  std::memcpy(needle.data(), &len, 8);
  needle.insert(needle.end(), name.begin(), name.end());
  auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  EXPECT_NE(it, bytes.end());
  return static_cast<size_t>(it - bytes.begin());
}

TEST(GgufReaderTest, ReadsStories260kHeaderMetadataAndTensors) {
  auto r = GgufReader::Open(kGguf);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  GgufReader& g = **r;
  EXPECT_EQ(g.version(), 3u);
  EXPECT_EQ(g.tensors().size(), 48u);
  EXPECT_EQ(g.metadata().size(), 19u);
  EXPECT_EQ(g.alignment(), 32u);
  EXPECT_EQ(g.data_offset(), 14176u);
  EXPECT_EQ(*g.GetString("general.architecture"), "llama");
  EXPECT_EQ(*g.GetInt("llama.embedding_length"), 64);
  EXPECT_EQ(*g.GetInt("llama.attention.head_count_kv"), 4);
  EXPECT_NEAR(*g.GetFloat("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-9);
  EXPECT_FALSE(g.Has("llama.rope.freq_base"));
  auto tokens = g.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 512u);
  EXPECT_EQ((*tokens)[1], "<s>");
  EXPECT_EQ((*tokens)[3], "<0x00>");
  EXPECT_EQ(g.GetFloatArray("tokenizer.ggml.scores")->size(), 512u);
  auto types = g.GetIntArray("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok());
  EXPECT_EQ((*types)[0], 2);
  EXPECT_EQ(*g.GetInt("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(*g.TensorShape("token_embd.weight"), (tensor::Shape{512, 64}));
  auto embd = g.ReadF32("token_embd.weight");
  ASSERT_TRUE(embd.ok());
  EXPECT_EQ(embd->numel(), 512 * 64);
}

TEST(GgufReaderTest, TypedGettersReportMissingAndMistypedKeys) {
  auto r = GgufReader::Open(kGguf);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->GetInt("no.such.key").status().code(), StatusCode::kNotFound);
  auto wrong = (*r)->GetInt("general.architecture");
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("general.architecture"), std::string::npos);
  EXPECT_EQ((*r)->GetStringArray("tokenizer.ggml.scores").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*(*r)->GetFloatOr("llama.rope.freq_base", 10000.0), 10000.0);
}

TEST(GgufReaderTest, MissingFileIsNotFound) {
  EXPECT_EQ(GgufReader::Open("/nonexistent/x.gguf").status().code(), StatusCode::kNotFound);
}

TEST(GgufReaderTest, TruncatedFileIsDataLossNamingFile) {
  const auto bytes = ReadBytes(kGguf);
  for (size_t keep : {size_t{3}, size_t{100}, size_t{5000}, size_t{14000}}) {
    const std::string path = WriteTemp("trunc_" + std::to_string(keep) + ".gguf",
                                       std::vector<uint8_t>(bytes.begin(), bytes.begin() + keep));
    auto r = GgufReader::Open(path);
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << keep;
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
  }
  // Header intact, tensor data cut: the error names a tensor.
  const std::string path =
      WriteTemp("trunc_data.gguf", std::vector<uint8_t>(bytes.begin(), bytes.end() - 100));
  auto r = GgufReader::Open(path);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("tensor '"), std::string::npos) << r.status().message();
}

TEST(GgufReaderTest, BadMagicIsDataLoss) {
  auto bytes = ReadBytes(kGguf);
  std::memcpy(bytes.data(), "GGUX", 4);
  const std::string path = WriteTemp("bad_magic.gguf", bytes);
  auto r = GgufReader::Open(path);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("magic"), std::string::npos);
  EXPECT_NE(r.status().message().find(path), std::string::npos);
}

TEST(GgufReaderTest, TensorOffsetOutOfRangeIsDataLossNamingTensor) {
  auto bytes = ReadBytes(kGguf);
  const std::string name = "blk.4.ffn_down.weight";
  const size_t at = FindTensorInfo(bytes, name) + 8 + name.size();
  uint32_t n_dims;
  std::memcpy(&n_dims, &bytes[at], 4);
  const size_t offset_at = at + 4 + 8 * n_dims + 4;
  const uint64_t huge = 1ull << 40;
  std::memcpy(&bytes[offset_at], &huge, 8);
  const std::string path = WriteTemp("bad_offset.gguf", bytes);
  auto r = GgufReader::Open(path);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(path), std::string::npos);
}

TEST(GgufReaderTest, UnknownTensorTypeIsInvalidArgumentNamingTensor) {
  auto bytes = ReadBytes(kGguf);
  const std::string name = "blk.2.attn_q.weight";
  const size_t at = FindTensorInfo(bytes, name) + 8 + name.size();
  uint32_t n_dims;
  std::memcpy(&n_dims, &bytes[at], 4);
  const uint32_t bad_type = 99;
  std::memcpy(&bytes[at + 4 + 8 * n_dims], &bad_type, 4);
  auto r = GgufReader::Open(WriteTemp("bad_type.gguf", bytes));
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("99"), std::string::npos);
}

// ---- a tiny GGUF writer for synthetic files ----
class GgufWriter {
 public:
  template <typename T>
  void Pod(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  void Str(const std::string& s) {
    Pod<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void Key(const std::string& k, GgufType t) {
    Str(k);
    Pod<uint32_t>(static_cast<uint32_t>(t));
  }
  void Align(size_t a) {
    while (bytes.size() % a != 0) bytes.push_back(0);
  }
  std::vector<uint8_t> bytes;
};

TEST(GgufReaderTest, ReadsEveryMetadataTypeAndF16Bf16Q8_0TensorsInV2) {
  GgufWriter w;
  w.Pod<uint32_t>(0x46554747);
  w.Pod<uint32_t>(2);   // version 2
  w.Pod<uint64_t>(3);   // tensors
  w.Pod<uint64_t>(15);  // kv pairs
  w.Key("u8", GgufType::kU8);
  w.Pod<uint8_t>(200);
  w.Key("i8", GgufType::kI8);
  w.Pod<int8_t>(-5);
  w.Key("u16", GgufType::kU16);
  w.Pod<uint16_t>(60000);
  w.Key("i16", GgufType::kI16);
  w.Pod<int16_t>(-30000);
  w.Key("u32", GgufType::kU32);
  w.Pod<uint32_t>(4000000000u);
  w.Key("i32", GgufType::kI32);
  w.Pod<int32_t>(-7);
  w.Key("f32", GgufType::kF32);
  w.Pod<float>(1.5f);
  w.Key("bool", GgufType::kBool);
  w.Pod<uint8_t>(1);
  w.Key("str", GgufType::kString);
  w.Str("héllo");
  w.Key("u64", GgufType::kU64);
  w.Pod<uint64_t>(1ull << 40);
  w.Key("i64", GgufType::kI64);
  w.Pod<int64_t>(-(1ll << 40));
  w.Key("f64", GgufType::kF64);
  w.Pod<double>(0.25);
  w.Key("ints", GgufType::kArray);
  w.Pod<uint32_t>(5);
  w.Pod<uint64_t>(2);
  w.Pod<int32_t>(3);
  w.Pod<int32_t>(-4);
  w.Key("nested", GgufType::kArray);
  w.Pod<uint32_t>(9);
  w.Pod<uint64_t>(2);
  w.Pod<uint32_t>(8);
  w.Pod<uint64_t>(1);
  w.Str("a");
  w.Pod<uint32_t>(6);
  w.Pod<uint64_t>(2);
  w.Pod<float>(1.0f);
  w.Pod<float>(2.0f);
  w.Key("general.alignment", GgufType::kU32);
  w.Pod<uint32_t>(64);
  // tensors: f16 [2], bf16 [2], q8_0 [32]
  w.Str("h");
  w.Pod<uint32_t>(1);
  w.Pod<uint64_t>(2);
  w.Pod<uint32_t>(1);
  w.Pod<uint64_t>(0);
  w.Str("b");
  w.Pod<uint32_t>(1);
  w.Pod<uint64_t>(2);
  w.Pod<uint32_t>(30);
  w.Pod<uint64_t>(64);
  w.Str("q");
  w.Pod<uint32_t>(1);
  w.Pod<uint64_t>(32);
  w.Pod<uint32_t>(8);
  w.Pod<uint64_t>(128);
  w.Align(64);
  w.Pod<uint16_t>(0x3c00);
  w.Pod<uint16_t>(0xc000);  // f16 1.0, -2.0
  w.Align(64);
  w.Pod<uint16_t>(0x3fc0);
  w.Pod<uint16_t>(0x4040);  // bf16 1.5, 3.0
  w.Align(64);
  w.Pod<uint16_t>(0x3800);  // q8_0 scale 0.5
  for (int i = 0; i < 32; ++i) w.Pod<int8_t>(static_cast<int8_t>(i - 16));
  auto r = GgufReader::Open(WriteTemp("all_types.gguf", w.bytes));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  GgufReader& g = **r;
  EXPECT_EQ(g.version(), 2u);
  EXPECT_EQ(g.alignment(), 64u);
  EXPECT_EQ(*g.GetInt("u8"), 200);
  EXPECT_EQ(*g.GetInt("i8"), -5);
  EXPECT_EQ(*g.GetInt("u16"), 60000);
  EXPECT_EQ(*g.GetInt("i16"), -30000);
  EXPECT_EQ(*g.GetInt("u32"), 4000000000ll);
  EXPECT_EQ(*g.GetInt("i32"), -7);
  EXPECT_EQ(*g.GetFloat("f32"), 1.5);
  EXPECT_TRUE(*g.GetBool("bool"));
  EXPECT_EQ(*g.GetString("str"), "héllo");
  EXPECT_EQ(*g.GetInt("u64"), 1ll << 40);
  EXPECT_EQ(*g.GetInt("i64"), -(1ll << 40));
  EXPECT_EQ(*g.GetFloat("f64"), 0.25);
  EXPECT_EQ(*g.GetIntArray("ints"), (std::vector<int64_t>{3, -4}));
  const GgufValue& nested = g.metadata().at("nested");
  ASSERT_EQ(nested.array.size(), 2u);
  EXPECT_EQ(nested.array[0].array[0].s, "a");
  EXPECT_EQ(nested.array[1].array[1].f, 2.0);
  auto h = g.ReadF32("h");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->f32()[0], 1.0f);
  EXPECT_EQ(h->f32()[1], -2.0f);
  auto b = g.ReadF32("b");
  EXPECT_EQ(b->f32()[0], 1.5f);
  EXPECT_EQ(b->f32()[1], 3.0f);
  auto q = g.ReadF32("q");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->f32()[0], -8.0f);
  EXPECT_EQ(q->f32()[31], 7.5f);
}

TEST(GgufReaderTest, Qwen35ConfigRefusesMtpLayersOutsideTheBlockCount) {
  for (int64_t nextn : {-1, 5, 6}) {
    GgufWriter w;
    w.Pod<uint32_t>(0x46554747);
    w.Pod<uint32_t>(3);
    w.Pod<uint64_t>(0);  // tensors
    w.Pod<uint64_t>(3);  // kv pairs
    w.Key("general.architecture", GgufType::kString);
    w.Str("qwen35moe");
    w.Key("qwen35moe.block_count", GgufType::kU32);
    w.Pod<uint32_t>(5);
    w.Key("qwen35moe.nextn_predict_layers", GgufType::kI64);
    w.Pod<int64_t>(nextn);
    auto r = GgufReader::Open(WriteTemp("nextn.gguf", w.bytes));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto config = Qwen35ConfigFromGguf(**r);
    ASSERT_FALSE(config.ok()) << nextn;
    EXPECT_NE(
        config.status().message().find("qwen35moe.nextn_predict_layers " + std::to_string(nextn)),
        std::string::npos)
        << config.status().message();
  }
}

// A qwen35moe tensor that the source reorders (value heads untiled, experts fused) is checked
// against the config's shape before any index is taken: a wrong file is an error naming the
// tensor, not a read or write past its end.
TEST(GgufReaderTest, Qwen35SourceChecksAReorderedTensorsShapeFirst) {
  GgufWriter w;
  w.Pod<uint32_t>(0x46554747);
  w.Pod<uint32_t>(3);
  w.Pod<uint64_t>(2);              // tensors
  w.Pod<uint64_t>(0);              // kv pairs
  w.Str("blk.0.attn_qkv.weight");  // F32 [3, 8]: the config below expects [16, 8]
  w.Pod<uint32_t>(2);
  w.Pod<uint64_t>(8);
  w.Pod<uint64_t>(3);
  w.Pod<uint32_t>(0);
  w.Pod<uint64_t>(0);
  w.Str("blk.0.ffn_gate_exps.weight");  // F32 [3, 4, 8]: 3 experts, the config has 2
  w.Pod<uint32_t>(3);
  w.Pod<uint64_t>(8);
  w.Pod<uint64_t>(4);
  w.Pod<uint64_t>(3);
  w.Pod<uint32_t>(0);
  w.Pod<uint64_t>(96);
  w.Align(32);
  for (int i = 0; i < 3 * 8 + 3 * 4 * 8; ++i) {
    w.Pod<float>(0.5f);
  }
  auto r = GgufReader::Open(WriteTemp("qwen35_shapes.gguf", w.bytes));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Qwen35Config c;
  c.hidden_size = 8;
  c.num_layers = 1;
  c.full_attention = {false};
  c.head_dim = 8;
  c.linear_num_key_heads = 1;
  c.linear_num_value_heads = 2;
  c.linear_key_head_dim = 4;
  c.linear_value_head_dim = 4;  // conv channels 2·4 + 2·4 = 16
  c.num_experts = 2;
  c.moe_intermediate_size = 4;
  const Qwen35GgufSource source(**r, c);
  for (const std::string name : {"model.layers.0.linear_attn.in_proj_qkv.weight",
                                 "model.layers.0.mlp.experts.gate_up_proj"}) {
    SCOPED_TRACE(name);
    for (bool stored : {true, false}) {
      auto t = stored ? source.ReadStored(name) : source.ReadF32(name);
      ASSERT_FALSE(t.ok());
      EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(t.status().message().find("the config expects"), std::string::npos)
          << t.status().message();
      EXPECT_NE(t.status().message().find(name.find("qkv") != std::string::npos
                                              ? "blk.0.attn_qkv.weight"
                                              : "blk.0.ffn_gate_exps.weight"),
                std::string::npos)
          << t.status().message();
    }
  }
}

}  // namespace
}  // namespace gguf_reader_test
}  // namespace tandem::model
