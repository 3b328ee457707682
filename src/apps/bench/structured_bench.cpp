#include "apps/bench/structured_bench.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "apps/model_files.h"
#include "structured/automaton.h"
#include "structured/compiled_grammar.h"
#include "structured/json_schema_compiler.h"
#include "worker/structured_output.h"

namespace tandem::apps {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

Result<std::shared_ptr<const structured::CompiledGrammar>> CompileSchema(
    const StructuredBenchConfig& config) {
  std::string text = config.schema_json;
  if (!text.empty() && text[0] == '@') {
    TANDEM_ASSIGN_OR_RETURN(text, ReadTextFile(text.substr(1), "--schema"));
  }
  const nlohmann::json schema = nlohmann::json::parse(text, nullptr, false);
  if (schema.is_discarded()) return InvalidArgument("--schema is not JSON");
  TANDEM_ASSIGN_OR_RETURN(structured::Grammar grammar, structured::CompileJsonSchema(schema));
  TANDEM_ASSIGN_OR_RETURN(auto automaton, structured::Automaton::Compile(grammar));
  TANDEM_ASSIGN_OR_RETURN(ModelFiles files, InspectModelFiles(config.model, config.tokenizer));
  TANDEM_ASSIGN_OR_RETURN(auto tokenizer, LoadTokenizer(files));
  std::vector<std::string> bytes(tokenizer->vocab_size());
  for (int32_t id = 0; id < tokenizer->vocab_size(); ++id) {
    if (!tokenizer->IsSpecial(id)) bytes[id] = tokenizer->TokenBytes(id);
  }
  auto vocab = std::make_shared<const structured::TokenVocabulary>(std::move(bytes),
                                                                   tokenizer->vocab_size());
  return std::make_shared<const structured::CompiledGrammar>(automaton, vocab);
}

}  // namespace

Status RunStructuredBench(const StructuredBenchConfig& config) {
  TANDEM_ASSIGN_OR_RETURN(auto grammar, CompileSchema(config));
  const int32_t vocab = grammar->vocabulary().vocab_size();
  const int32_t eos = vocab;  // an id outside the vocabulary stands for "the end"
  std::vector<std::unique_ptr<structured::GrammarMatcher>> rows;
  for (int32_t r = 0; r < config.rows; ++r) rows.push_back(grammar->NewMatcher());
  std::mt19937_64 rng(config.seed);
  std::vector<uint32_t> bitmask(structured::BitmaskWords(vocab));
  std::vector<float> logits(vocab, 0.0f), processed(vocab, 0.0f);
  std::vector<double> row_ms, step_ms, fill_ms, copy_ms, plain_copy_ms;
  int64_t sequences_done = 0;
  const auto start = Clock::now();
  for (int32_t step = 0; step < config.warmup_steps + config.steps; ++step) {
    const auto step_start = Clock::now();
    double masked = 0.0;
    for (auto& matcher : rows) {
      // The sampler copies every row anyway; a masked row's copy is CopyMaskedLogits.
      const auto t0 = Clock::now();
      grammar->FillNextTokenBitmask(*matcher, std::vector<int32_t>{}, bitmask);
      const auto t1 = Clock::now();
      worker::CopyMaskedLogits(logits, bitmask, processed);
      const auto t2 = Clock::now();
      std::copy(logits.begin(), logits.end(), processed.begin());
      const auto t3 = Clock::now();
      const double ms = Ms(t1 - t0) + std::max(0.0, Ms(t2 - t1) - Ms(t3 - t2));
      masked += ms;
      if (step >= config.warmup_steps) {
        row_ms.push_back(ms);
        fill_ms.push_back(Ms(t1 - t0));
        copy_ms.push_back(Ms(t2 - t1));
        plain_copy_ms.push_back(Ms(t3 - t2));
      }
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < vocab; ++id) {
        if (structured::TestBit(bitmask, id)) allowed.push_back(id);
      }
      if (allowed.empty() || (matcher->CanEnd() && rng() % 4 == 0)) {
        matcher = grammar->NewMatcher();  // the sequence ended: a new one takes the row
        ++sequences_done;
        continue;
      }
      const int32_t pick = allowed[rng() % allowed.size()];
      if (pick != eos) matcher->AcceptBytes(grammar->vocabulary().bytes(pick));
    }
    (void)step_start;
    if (step >= config.warmup_steps) step_ms.push_back(masked);
  }
  std::printf(
      "structured masks: vocabulary %d, %d rows, %d steps after %d warm-up steps "
      "(%lld sequences ended, %d positions built, %.0f ms in all)\n",
      vocab, config.rows, config.steps, config.warmup_steps, static_cast<long long>(sequences_done),
      grammar->num_positions_built(), Ms(Clock::now() - start));
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / v.size();
  };
  std::printf("per row: bitmask %.3f ms, masked copy %.3f ms (a plain copy: %.3f ms)\n",
              mean(fill_ms), mean(copy_ms), mean(plain_copy_ms));
  std::printf("per row (bitmask + copy beyond a plain copy):  mean %.3f ms  p50 %.3f ms  "
              "p99 %.3f ms\n",
              row_ms.empty() ? 0.0 : [&] { double s = 0; for (double v : row_ms) s += v;
                                           return s / row_ms.size(); }(),
              Percentile(row_ms, 0.5), Percentile(row_ms, 0.99));
  std::printf("per step: mean %.3f ms  p50 %.3f ms  p99 %.3f ms (all %d rows)\n",
              step_ms.empty() ? 0.0 : [&] { double s = 0; for (double v : step_ms) s += v;
                                            return s / step_ms.size(); }(),
              Percentile(step_ms, 0.5), Percentile(step_ms, 0.99), config.rows);
  return Status::Ok();
}

}  // namespace tandem::apps
