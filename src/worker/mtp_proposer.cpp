#include "worker/mtp_proposer.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include "core/check.h"

namespace tandem::worker {

namespace {

model::DraftHead& HeadOf(model::Model& model) {
  model::DraftHead* head = model.draft_head();
  TANDEM_CHECK(head != nullptr) << "MTP speculation needs the model's MTP head";
  return *head;
}

}  // namespace

MtpProposer::MtpProposer(model::Model& model, model::KvCache& kv, int32_t num_drafts)
    : head_(HeadOf(model)), kv_(kv), num_drafts_(num_drafts), vocab_(model.info().vocab_size) {
  TANDEM_CHECK(num_drafts_ >= 1) << "MtpProposer: " << num_drafts_ << " drafts";
}

void MtpProposer::DummyStep() {
  for (int32_t k = 0; k < num_drafts_; ++k) {
    head_.Draft(model::ForwardContext{}, nullptr, nullptr, kv_, mtp_hidden_, mtp_logits_);
  }
}

std::vector<std::vector<int32_t>> MtpProposer::Propose(
    const StepInputs& inputs, const std::vector<std::vector<SampledToken>>& sampled,
    const model::ForwardOutput& target) {
  const model::ForwardContext& ctx = inputs.ctx;
  const int32_t vocab = vocab_;
  const std::vector<float>& target_hidden = target.hidden;
  TANDEM_CHECK(!target_hidden.empty() && target_hidden.size() % ctx.num_tokens() == 0)
      << "MtpProposer: " << target_hidden.size() << " hidden values for " << ctx.num_tokens()
      << " rows (the forward was not asked for them)";
  const int64_t h = static_cast<int64_t>(target_hidden.size()) / ctx.num_tokens();
  // Pass 1 over every row: row at position p pairs h_p with the token at p + 1 (the request's
  // own token when known — its KV entry is then right; a filler for rejected drafts' rows,
  // whose entries later steps overwrite).
  std::vector<int32_t> next(ctx.num_tokens());
  model::ForwardContext pass = ctx;
  pass.logits_indices.clear();
  struct Drafting {
    size_t request;    // index in inputs
    int32_t position;  // MTP position of its next draft row
  };
  std::vector<Drafting> drafting;
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    const RequestState& state = *inputs.requests[i];
    for (int32_t row = ctx.query_start_loc[i]; row < ctx.query_start_loc[i + 1]; ++row) {
      const int32_t p = ctx.positions[row];
      next[row] = p + 1 < state.num_tokens() ? state.token_ids[p + 1] : state.token_ids.back();
    }
    if (sampled[i].empty()) {
      continue;
    }
    // The last token gained sits at num_tokens − 1; the row before it drafts what follows.
    const int32_t p = state.num_tokens() - 2;
    const int32_t row = ctx.query_start_loc[i] + (p - ctx.positions[ctx.query_start_loc[i]]);
    pass.logits_indices.push_back(row);
    drafting.push_back({i, p});
  }
  head_.Draft(pass, next.data(), target_hidden.data(), kv_, mtp_hidden_, mtp_logits_);
  std::vector<std::vector<int32_t>> drafts(inputs.requests.size());
  std::vector<float> previous_hidden(drafting.size() * h);
  for (size_t d = 0; d < drafting.size(); ++d) {
    const auto row = std::span<const float>(mtp_logits_).subspan(d * vocab, vocab);
    drafts[drafting[d].request].push_back(GreedyArgmax(row));
    const int64_t src = pass.logits_indices[d];
    std::copy(mtp_hidden_.begin() + src * h, mtp_hidden_.begin() + (src + 1) * h,
              previous_hidden.begin() + d * h);
  }
  // Drafts 2..k: one row per request still drafting, from the head's own output.
  for (int32_t k = 1; k < num_drafts_; ++k) {
    model::ForwardContext step;
    step.block_size = ctx.block_size;
    step.query_start_loc.push_back(0);
    std::vector<int32_t> tokens;
    std::vector<float> hidden;
    std::vector<size_t> kept;
    for (size_t d = 0; d < drafting.size(); ++d) {
      if (drafting[d].request == SIZE_MAX) {
        continue;
      }
      const RequestState& state = *inputs.requests[drafting[d].request];
      const int32_t p = drafting[d].position + k;
      if (p / ctx.block_size >= static_cast<int32_t>(state.block_ids.size())) {
        drafting[d].request = SIZE_MAX;  // no room (max_model_len): stop drafting
        continue;
      }
      tokens.push_back(drafts[drafting[d].request].back());
      hidden.insert(hidden.end(), previous_hidden.begin() + d * h,
                    previous_hidden.begin() + (d + 1) * h);
      step.token_ids.push_back(tokens.back());
      step.positions.push_back(p);
      step.slot_mapping.push_back(int64_t{state.block_ids[p / ctx.block_size]} * ctx.block_size +
                                  p % ctx.block_size);
      step.query_start_loc.push_back(step.num_tokens());
      step.seq_lens.push_back(p + 1);
      step.block_tables.push_back(state.block_ids);
      step.state_slots.push_back(state.state_slot);
      step.logits_indices.push_back(step.num_tokens() - 1);
      kept.push_back(d);
    }
    head_.Draft(step, tokens.data(), hidden.data(), kv_, mtp_hidden_, mtp_logits_);
    for (size_t r = 0; r < kept.size(); ++r) {
      const size_t d = kept[r];
      const auto row = std::span<const float>(mtp_logits_).subspan(r * vocab, vocab);
      drafts[drafting[d].request].push_back(GreedyArgmax(row));
      std::copy(mtp_hidden_.begin() + r * h, mtp_hidden_.begin() + (r + 1) * h,
                previous_hidden.begin() + d * h);
    }
  }
  return drafts;
}

}  // namespace tandem::worker
