#include "server/openai/logprobs_json.h"

#include <fmt/format.h>

namespace tandem::server::openai {

using nlohmann::json;

std::string LogprobTokenName(const text::Tokenizer& tokenizer, int32_t token_id,
                             bool tokens_as_ids) {
  return tokens_as_ids ? fmt::format("token_id:{}", token_id) : tokenizer.TokenBytes(token_id);
}

json PromptLogprobsJson(const text::Tokenizer& tokenizer,
                        const std::vector<int32_t>& prompt_token_ids,
                        const std::vector<protocol::PositionLogprobs>& prompt_logprobs,
                        bool tokens_as_ids) {
  auto name = [&](int32_t id) { return LogprobTokenName(tokenizer, id, tokens_as_ids); };
  json out = json::array({nullptr});
  for (size_t t = 1; t < prompt_token_ids.size() && t - 1 < prompt_logprobs.size(); ++t) {
    const protocol::PositionLogprobs& lp = prompt_logprobs[t - 1];
    json entry = json::object();
    for (size_t r = 0; r < lp.top.size(); ++r) {
      entry[std::to_string(lp.top[r].token_id)] = {{"logprob", lp.top[r].logprob},
                                                   {"rank", r + 1},
                                                   {"decoded_token", name(lp.top[r].token_id)}};
    }
    entry[std::to_string(lp.sampled.token_id)] = {{"logprob", lp.sampled.logprob},
                                                  {"rank", lp.sampled_rank},
                                                  {"decoded_token", name(lp.sampled.token_id)}};
    out.push_back(std::move(entry));
  }
  return out;
}

json CompletionLogprobsJson(const text::Tokenizer& tokenizer, const std::vector<int32_t>& token_ids,
                            const std::vector<protocol::PositionLogprobs>& logprobs,
                            int32_t text_offset_start, bool tokens_as_ids,
                            int32_t num_leading_null) {
  auto name = [&](int32_t id) { return LogprobTokenName(tokenizer, id, tokens_as_ids); };
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(),
       offsets = json::array();
  int32_t offset = text_offset_start;
  for (size_t i = 0; i < token_ids.size(); ++i) {
    const std::string piece = tokenizer.TokenBytes(token_ids[i]);
    tokens.push_back(name(token_ids[i]));
    offsets.push_back(offset);
    offset += static_cast<int32_t>(piece.size());
    const int64_t at = static_cast<int64_t>(i) - num_leading_null;
    if (at >= 0 && at < static_cast<int64_t>(logprobs.size())) {
      token_logprobs.push_back(logprobs[at].sampled.logprob);
      json alternatives = json::object();
      for (const protocol::TokenLogprob& t : logprobs[at].top) {
        alternatives[name(t.token_id)] = t.logprob;
      }
      top.push_back(std::move(alternatives));
    } else {
      token_logprobs.push_back(nullptr);
      top.push_back(nullptr);
    }
  }
  return {{"text_offset", offsets},
          {"token_logprobs", token_logprobs},
          {"tokens", tokens},
          {"top_logprobs", top}};
}

namespace {

// One chat logprobs entry: the token's name, its logprob and the name's bytes.
json TokenEntry(const text::Tokenizer& tokenizer, const protocol::TokenLogprob& t,
                bool tokens_as_ids) {
  const std::string piece = LogprobTokenName(tokenizer, t.token_id, tokens_as_ids);
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(static_cast<int>(c));
  return {{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes}};
}

}  // namespace

json ChatLogprobsJson(const text::Tokenizer& tokenizer, const std::vector<int32_t>& token_ids,
                      const std::vector<protocol::PositionLogprobs>& logprobs, bool tokens_as_ids) {
  json content = json::array();
  for (size_t i = 0; i < token_ids.size(); ++i) {
    protocol::TokenLogprob sampled{token_ids[i], 0.0f};
    if (i < logprobs.size()) sampled = logprobs[i].sampled;
    json entry = TokenEntry(tokenizer, sampled, tokens_as_ids);
    entry["top_logprobs"] = json::array();
    if (i < logprobs.size()) {
      for (const protocol::TokenLogprob& t : logprobs[i].top) {
        entry["top_logprobs"].push_back(TokenEntry(tokenizer, t, tokens_as_ids));
      }
    }
    content.push_back(std::move(entry));
  }
  return {{"content", content}};
}

}  // namespace tandem::server::openai
