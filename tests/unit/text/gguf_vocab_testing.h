// Test-only GGUF metadata reader: pulls the SentencePiece vocab (ReadVocab) or the byte-level
// BPE vocab (ReadByteLevelVocab) out of a GGUF v3 file so the text/ tests can build tokenizers
// without depending on model/ (which owns the real GGUF reader). Reads only the KV section;
// tensors are ignored.
// Format: magic "GGUF", u32 version, u64 n_tensors, u64 n_kv, then per kv: string key
// (u64 length + bytes), u32 type, value. Types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32,
// 7 bool, 8 string, 9 array (u32 elem type, u64 n, elems), 10 u64, 11 i64, 12 f64.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "text/gguf_byte_level_vocab.h"
#include "text/spm_bpe_tokenizer.h"

namespace tandem::text::testing {

class GgufKvReader {
 public:
  explicit GgufKvReader(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    data_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Reads every KV pair into `vocab` when its key is one of tokenizer.ggml.*.
  SpmVocab ReadVocab() {
    if (Bytes(4) != "GGUF") throw std::runtime_error("not a GGUF file");
    uint32_t version = Pod<uint32_t>();
    if (version != 3) throw std::runtime_error("expected GGUF v3");
    Pod<uint64_t>();  // n_tensors
    uint64_t n_kv = Pod<uint64_t>();
    SpmVocab vocab;
    vocab.add_bos = true;  // llama.cpp default for the SPM ("llama") vocab when the key is absent
    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key = String();
      uint32_t type = Pod<uint32_t>();
      if (key == "tokenizer.ggml.tokens") {
        ExpectArray(type, 8, key);
        for (uint64_t n = Pod<uint64_t>(), j = 0; j < n; ++j) vocab.tokens.push_back(String());
      } else if (key == "tokenizer.ggml.scores") {
        ExpectArray(type, 6, key);
        for (uint64_t n = Pod<uint64_t>(), j = 0; j < n; ++j) vocab.scores.push_back(Pod<float>());
      } else if (key == "tokenizer.ggml.token_type") {
        ExpectArray(type, 5, key);
        for (uint64_t n = Pod<uint64_t>(), j = 0; j < n; ++j) {
          vocab.token_types.push_back(Pod<int32_t>());
        }
      } else if (key == "tokenizer.ggml.bos_token_id") {
        vocab.bos_id = static_cast<int32_t>(Integer(type));
      } else if (key == "tokenizer.ggml.eos_token_id") {
        vocab.eos_id = static_cast<int32_t>(Integer(type));
      } else if (key == "tokenizer.ggml.unknown_token_id") {
        vocab.unk_id = static_cast<int32_t>(Integer(type));
      } else if (key == "tokenizer.ggml.add_bos_token") {
        vocab.add_bos = Integer(type) != 0;
      } else if (key == "tokenizer.ggml.add_space_prefix") {
        vocab.add_space_prefix = Integer(type) != 0;
      } else {
        Skip(type);
      }
    }
    return vocab;
  }

  // tokenizer.ggml.{pre,tokens,token_type,merges,bos/eos_token_id,add_bos_token} of a "gpt2"
  // vocab; throws when tokenizer.ggml.model is another.
  GgufByteLevelVocabFields ReadByteLevelVocab() {
    if (Bytes(4) != "GGUF") throw std::runtime_error("not a GGUF file");
    if (Pod<uint32_t>() != 3) throw std::runtime_error("expected GGUF v3");
    Pod<uint64_t>();  // n_tensors
    uint64_t n_kv = Pod<uint64_t>();
    GgufByteLevelVocabFields fields;
    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key = String();
      uint32_t type = Pod<uint32_t>();
      if (key == "tokenizer.ggml.model") {
        if (type != 8 || String() != "gpt2") throw std::runtime_error("not a gpt2 vocab");
      } else if (key == "tokenizer.ggml.pre" && type == 8) {
        fields.pre = String();
      } else if (key == "tokenizer.ggml.tokens") {
        ExpectArray(type, 8, key);
        for (uint64_t n = Pod<uint64_t>(), j = 0; j < n; ++j) fields.tokens.push_back(String());
      } else if (key == "tokenizer.ggml.merges") {
        ExpectArray(type, 8, key);
        for (uint64_t n = Pod<uint64_t>(), j = 0; j < n; ++j) fields.merges.push_back(String());
      } else if (key == "tokenizer.ggml.token_type") {
        ExpectArray(type, 5, key);
        for (uint64_t n = Pod<uint64_t>(), j = 0; j < n; ++j) {
          fields.token_types.push_back(Pod<int32_t>());
        }
      } else if (key == "tokenizer.ggml.bos_token_id") {
        fields.bos_id = static_cast<int32_t>(Integer(type));
      } else if (key == "tokenizer.ggml.eos_token_id") {
        fields.eos_id = static_cast<int32_t>(Integer(type));
      } else if (key == "tokenizer.ggml.add_bos_token") {
        fields.add_bos = Integer(type) != 0;
      } else {
        Skip(type);
      }
    }
    return fields;
  }

 private:
  template <typename T>
  T Pod() {
    if (pos_ + sizeof(T) > data_.size()) throw std::runtime_error("truncated GGUF");
    T value;
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string Bytes(uint64_t n) {
    if (pos_ + n > data_.size()) throw std::runtime_error("truncated GGUF");
    std::string s(data_.data() + pos_, n);
    pos_ += n;
    return s;
  }
  std::string String() { return Bytes(Pod<uint64_t>()); }
  void ExpectArray(uint32_t type, uint32_t elem_type, const std::string& key) {
    if (type != 9 || Pod<uint32_t>() != elem_type) throw std::runtime_error("bad type for " + key);
  }
  int64_t Integer(uint32_t type) {
    switch (type) {
      case 0:
        return Pod<uint8_t>();
      case 1:
        return Pod<int8_t>();
      case 2:
        return Pod<uint16_t>();
      case 3:
        return Pod<int16_t>();
      case 4:
        return Pod<uint32_t>();
      case 5:
        return Pod<int32_t>();
      case 7:
        return Pod<uint8_t>();
      case 10:
        return static_cast<int64_t>(Pod<uint64_t>());
      case 11:
        return Pod<int64_t>();
      default:
        throw std::runtime_error("expected an integer GGUF value");
    }
  }
  void Skip(uint32_t type) {
    static const uint64_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type > 12) throw std::runtime_error("unknown GGUF value type");
    if (type == 8) {
      String();
    } else if (type == 9) {
      uint32_t elem_type = Pod<uint32_t>();
      for (uint64_t n = Pod<uint64_t>(), j = 0; j < n; ++j) Skip(elem_type);
    } else {
      Bytes(kSizes[type]);
    }
  }

  std::vector<char> data_;
  uint64_t pos_ = 0;
};

}  // namespace tandem::text::testing
