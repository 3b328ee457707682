// A Q8_0 model served as stored (MatmulTyped's Q8_0 kernels) computes what the same model
// widened to f32 at load computes: stories260K with every Linear/embedding weight whose rows are
// whole blocks of 32 quantized by ggml's reference (quantize_row_q8_0_ref: d = max|x| / 127,
// q = round(x / d), d stored as f16) — once kept as Q8_0, once widened at load (what tandem did
// before weights kept their dtype). Same greedy ids on every golden prompt, prefill logits within
// f32 summation-order noise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include "kernels/ops.h"
#include "model/arch/llama.h"
#include "model/config/model_config.h"
#include "model/layers/weight_matmul.h"
#include "model/loader/gguf_reader.h"
#include "testing.h"

namespace tandem::model {
namespace quantized_model_test {
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
      dst[b * 34 + 2 + j] =
          static_cast<uint8_t>(static_cast<int8_t>(std::round(x[b * 32 + j] * id)));
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

// stories260K quantized to Q8_0 in memory, once kept as Q8_0 and once widened at load, with the
// q8_0_dot in force when Load() runs.
struct KeptAndWidened {
  std::unique_ptr<GgufReader> gguf;
  std::unique_ptr<Q8_0Source> kept_source, widened_source;
  std::unique_ptr<Model> kept, widened;
  void Load() {
    auto opened = GgufReader::Open(kGguf);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    gguf = std::move(opened).value();
    auto config = LlamaConfigFromGguf(*gguf);
    ASSERT_TRUE(config.ok());
    kept_source = std::make_unique<Q8_0Source>(*gguf, /*widen=*/false);
    widened_source = std::make_unique<Q8_0Source>(*gguf, /*widen=*/true);
    auto k = LoadLlama(config.value(), *kept_source, WeightFormat::kGguf);
    auto w = LoadLlama(config.value(), *widened_source, WeightFormat::kGguf);
    ASSERT_TRUE(k.ok() && w.ok());
    kept = std::move(k).value();
    widened = std::move(w).value();
  }
};

// Sets the process-wide Q8_0 dot for one test, restores int8 (the default) after it.
struct Q8_0DotFor {
  explicit Q8_0DotFor(Q8_0Dot dot) { SetQ8_0Dot(dot); }
  ~Q8_0DotFor() { SetQ8_0Dot(Q8_0Dot::kInt8); }
};

// Greedy ids and every position's logits of `model` for `prompt` + 40 generated tokens.
std::pair<std::vector<int32_t>, std::vector<float>> Generate(Model& model,
                                                             const std::vector<int32_t>& prompt) {
  testing::GreedyRunner runner(model, /*stop=*/-1);
  testing::Seq s;
  s.tokens = prompt;
  s.num_to_generate = 40;
  std::vector<testing::Seq> seqs = {s};
  runner.Run(seqs, /*chunk=*/0, /*collect_all_logits=*/true);
  return {seqs[0].generated, seqs[0].logits};
}

const std::vector<std::vector<int32_t>> kPrompts = {
    {1}, {1, 403, 407, 261}, {1, 365, 306, 183, 278, 263, 431}};

// Logits of every position of `tokens` fed as one prompt (teacher forcing: the same contexts).
std::vector<float> TeacherForced(Model& model, const std::vector<int32_t>& tokens) {
  testing::GreedyRunner runner(model, /*stop=*/-1);
  testing::Seq s;
  s.tokens = tokens;
  s.num_to_generate = 1;
  std::vector<testing::Seq> seqs = {s};
  runner.Run(seqs, /*chunk=*/0, /*collect_all_logits=*/true);
  return seqs[0].logits;
}

// q8_0_dot int8 (llama.cpp's arithmetic: activations quantized to Q8_0 per block of 32, int8
// dot products; MatmulQ8_0Int8 is bit-exact to its naive reference in
// int8_matmul_parity_test.cpp) wired into the model: fed the exact model's own greedy
// continuations, the int8 model's logits differ by the activation rounding only — the same
// argmax at >= 95% of the positions and every logit within 0.5 (a wrong scale or block moves
// them by tens: 23 when one was broken while writing this). Free-running greedy ids do drift
// apart on this 64-wide model (one case at step 13), as llama.cpp's Q8_0 does from f32.
TEST(QuantizedModelTest, Q8_0Int8DotStaysWithinActivationRoundingOfTheExactWidening) {
  if (!kernels::MatmulQ8_0Int8Available()) GTEST_SKIP() << "no AVX-512 VNNI: int8 dot unused";
  const Q8_0DotFor int8(Q8_0Dot::kInt8);
  KeptAndWidened m;
  ASSERT_NO_FATAL_FAILURE(m.Load());
  Model* kept = m.kept.get();
  Model* widened = m.widened.get();
  const int32_t vocab = kept->info().vocab_size;
  int positions = 0, same_argmax = 0;
  for (const auto& prompt : kPrompts) {
    std::vector<int32_t> tokens = prompt;
    const auto [ids, unused] = Generate(*widened, prompt);
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    const std::vector<float> got = TeacherForced(*kept, tokens);
    const std::vector<float> want = TeacherForced(*widened, tokens);
    ASSERT_EQ(got.size(), tokens.size() * vocab);
    const float diff = testing::MaxAbsDiff(got, want);
    EXPECT_GT(diff, 0.0f) << "the int8 dot did not run";
    EXPECT_LT(diff, 0.5f);
    for (size_t p = 0; p < tokens.size(); ++p) {
      const float* g = &got[p * vocab];
      const float* w = &want[p * vocab];
      same_argmax += std::max_element(g, g + vocab) - g == std::max_element(w, w + vocab) - w;
      ++positions;
    }
  }
  EXPECT_GE(same_argmax, positions * 95 / 100) << same_argmax << " of " << positions;
}

TEST(QuantizedModelTest, Q8_0KeptComputesWhatQ8_0WidenedAtLoadComputes) {
  const Q8_0DotFor exact(Q8_0Dot::kFloat32);  // q8_0_dot float32: the exact widening
  KeptAndWidened m;
  ASSERT_NO_FATAL_FAILURE(m.Load());
  // stories260K: dim 64, so embedding, q/k/v/o and gate/up (k = 64) are Q8_0; down (k = 172) is
  // not whole blocks and stays f32.
  EXPECT_GE(m.kept_source->quantized(), 1 + 5 * 6);
  EXPECT_LT(m.kept->info().weight_bytes, m.widened->info().weight_bytes / 2);
  for (const auto& prompt : kPrompts) {
    const auto [kept_ids, kept_logits] = Generate(*m.kept, prompt);
    const auto [widened_ids, widened_logits] = Generate(*m.widened, prompt);
    ASSERT_EQ(kept_ids.size(), 40u);
    EXPECT_EQ(kept_ids, widened_ids);
    EXPECT_LT(testing::MaxAbsDiff(kept_logits, widened_logits), 1e-4f);
  }
}

}  // namespace
}  // namespace quantized_model_test
}  // namespace tandem::model
