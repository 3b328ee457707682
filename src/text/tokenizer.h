// Tokenizer: the interface the API server uses to turn prompt text into token ids and generated
// token ids back into text. Implementations: SpmBpeTokenizer (SentencePiece-BPE, Llama-2 style);
// ByteLevelBpeTokenizer (GPT-2 style byte-level BPE: Qwen, Llama-3).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::text {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Token ids of `text`. Special-token strings inside `text` (e.g. "<s>", "<|im_start|>") map to
  // their ids. `add_special_tokens`: prepend BOS when add_bos() is true.
  // Thread-safe (const, no shared mutable state).
  virtual std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const = 0;

  // Text of `ids`: the concatenated TokenBytes, with one leading space removed when
  // decode_strips_leading_space() (the SentencePiece dummy prefix; HF decoder Strip(start=1)),
  // special tokens dropped when `skip_special_tokens`, invalid UTF-8 replaced by U+FFFD.
  // Ids outside [0, vocab_size) (a model's padded vocab) decode to nothing.
  virtual std::string Decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const;

  // The raw vocab string of `id` (e.g. "▁Once", "<0x0A>", "<s>"); "" outside the vocab.
  virtual std::string IdToPiece(int32_t id) const = 0;

  // The bytes `id` contributes to decoded text, before leading-space stripping and UTF-8
  // validation: may be a partial UTF-8 sequence (byte-fallback tokens). Special tokens give
  // their content; ids outside the vocab give "". Used by Decode and IncrementalDetokenizer.
  virtual std::string TokenBytes(int32_t id) const = 0;

  // True when Decode removes one leading space from the start of the decoded text.
  virtual bool decode_strips_leading_space() const = 0;

  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_token_id() const = 0;   // -1 when none
  virtual int32_t eos_token_id() const = 0;   // -1 when none
  virtual std::string bos_token() const = 0;  // "" when none
  virtual std::string eos_token() const = 0;  // "" when none
  // True for control/special tokens (BOS, EOS, UNK, chat markers) that skip_special_tokens drops.
  // False outside the vocab.
  virtual bool IsSpecial(int32_t id) const = 0;
  // Whether Encode(text, /*add_special_tokens=*/true) prepends BOS.
  virtual bool add_bos() const = 0;
};

}  // namespace tandem::text
