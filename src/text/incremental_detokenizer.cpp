#include "text/incremental_detokenizer.h"

#include "text/utf8.h"

namespace tandem::text {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer,
                                               const std::vector<int32_t>& prompt_ids,
                                               bool skip_special_tokens)
    : tokenizer_(tokenizer),
      skip_special_tokens_(skip_special_tokens),
      strip_pending_(tokenizer.decode_strips_leading_space()) {
  for (int32_t id : prompt_ids) AppendTokenBytes(id);
  pending_bytes_.clear();
}

void IncrementalDetokenizer::AppendTokenBytes(int32_t token_id) {
  if (skip_special_tokens_ && tokenizer_.IsSpecial(token_id)) return;
  std::string piece = tokenizer_.TokenBytes(token_id);
  if (piece.empty()) return;
  // Mirrors Tokenizer::Decode: one leading space of the whole text is dropped.
  if (strip_pending_ && piece[0] == ' ') piece.erase(0, 1);
  strip_pending_ = false;
  pending_bytes_ += piece;
}

std::string IncrementalDetokenizer::Push(int32_t token_id) {
  AppendTokenBytes(token_id);
  std::string text;
  size_t consumed = AppendSanitizedUtf8(pending_bytes_, /*final=*/false, &text);
  pending_bytes_.erase(0, consumed);
  return text;
}

std::string IncrementalDetokenizer::Flush() {
  std::string text = SanitizeUtf8(pending_bytes_);
  pending_bytes_.clear();
  return text;
}

}  // namespace tandem::text
