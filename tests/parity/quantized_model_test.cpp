// A Q8_0 model served as stored (MatmulTyped's Q8_0 kernels) computes what the same model
// widened to f32 at load computes: stories260K with every Linear/embedding weight whose rows are
// whole blocks of 32 quantized by ggml's reference (quantize_row_q8_0_ref: d = max|x| / 127,
// q = round(x / d), d stored as f16) — once kept as Q8_0, once widened at load (what tandem did
// before weights kept their dtype). Same greedy ids on every golden prompt, prefill logits within
// f32 summation-order noise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "model/arch/llama.h"
#include "model/config/model_config.h"
#include "model/loader/gguf_reader.h"
#include "testing.h"

namespace tandem::model {
namespace {

const std::string kGguf = std::string(TANDEM_SHARED_DIR) + "/models/stories260k/stories260K.gguf";

// ggml-quants.c quantize_row_q8_0_ref over the rows of an f32 tensor [rows, k], k % 32 == 0.
tensor::Tensor QuantizeQ8_0(const tensor::Tensor& t) {
  tensor::Tensor out(t.shape(), tensor::DType::kQ8_0);
  const float* x = t.f32();
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t b = 0; b < t.numel() / 32; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t dh = tensor::FloatToHalf(d);
    std::memcpy(dst + b * 34, &dh, 2);
    for (int j = 0; j < 32; ++j) {
      dst[b * 34 + 2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x[b * 32 + j] * id)));
    }
  }
  return out;
}

class Q8_0Source : public WeightSource {
 public:
  Q8_0Source(const WeightSource& inner, bool widen) : inner_(inner), widen_(widen) {}
  const std::string& source_name() const override { return inner_.source_name(); }
  bool HasTensor(const std::string& name) const override { return inner_.HasTensor(name); }
  Result<tensor::Shape> TensorShape(const std::string& name) const override {
    return inner_.TensorShape(name);
  }
  Result<tensor::Tensor> ReadF32(const std::string& name) const override {
    return inner_.ReadF32(name);
  }
  Result<tensor::Tensor> ReadStored(const std::string& name) const override {
    TANDEM_ASSIGN_OR_RETURN(tensor::Tensor t, inner_.ReadF32(name));
    if (t.rank() != 2 || t.shape().back() % 32 != 0) return t;
    ++quantized_;
    tensor::Tensor q = QuantizeQ8_0(t);
    return widen_ ? q.ToF32() : std::move(q);
  }
  int quantized() const { return quantized_; }

 private:
  const WeightSource& inner_;
  bool widen_;
  mutable int quantized_ = 0;
};

TEST(QuantizedModelTest, Q8_0KeptComputesWhatQ8_0WidenedAtLoadComputes) {
  auto gguf = GgufReader::Open(kGguf);
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  auto config = LlamaConfigFromGguf(*gguf.value());
  ASSERT_TRUE(config.ok());
  Q8_0Source kept_source(*gguf.value(), /*widen=*/false);
  Q8_0Source widened_source(*gguf.value(), /*widen=*/true);
  auto kept = LoadLlama(config.value(), kept_source, WeightFormat::kGguf);
  auto widened = LoadLlama(config.value(), widened_source, WeightFormat::kGguf);
  ASSERT_TRUE(kept.ok() && widened.ok());
  // stories260K: dim 64, so embedding, q/k/v/o and gate/up (k = 64) are Q8_0; down (k = 172) is
  // not whole blocks and stays f32.
  EXPECT_GE(kept_source.quantized(), 1 + 5 * 6);
  EXPECT_LT(kept.value()->info().weight_bytes, widened.value()->info().weight_bytes / 2);
  const std::vector<std::vector<int32_t>> prompts = {
      {1}, {1, 403, 407, 261}, {1, 365, 306, 183, 278, 263, 431}};
  for (const auto& prompt : prompts) {
    std::vector<float> logits[2];
    std::vector<int32_t> ids[2];
    Model* models[2] = {kept.value().get(), widened.value().get()};
    for (int i = 0; i < 2; ++i) {
      testing::GreedyRunner runner(*models[i], /*stop=*/-1);
      testing::Seq s;
      s.tokens = prompt;
      s.num_to_generate = 40;
      std::vector<testing::Seq> seqs = {s};
      runner.Run(seqs, /*chunk=*/0, /*collect_all_logits=*/true);
      logits[i] = seqs[0].logits;
      ids[i] = seqs[0].generated;
    }
    ASSERT_EQ(ids[0].size(), 40u);
    EXPECT_EQ(ids[0], ids[1]);
    EXPECT_LT(testing::MaxAbsDiff(logits[0], logits[1]), 1e-4f);
  }
}

}  // namespace
}  // namespace tandem::model
