// ReadTokenizerJson: an HF tokenizer.json → its two big tables (model.vocab, model.merges) as
// vectors, read while parsing, and the rest of the file as a DOM.
//
// Qwen's tokenizer.json holds 151k vocab entries and 151k merges. As a DOM they cost ~0.5 s of a
// 1.35 s load (a std::map node and a json value per entry, then copied into vectors) and six
// times that under AddressSanitizer; every tokenizer load pays it (server start, the TP worker's
// vocabulary for structured outputs). Streamed, each entry is one string moved into place.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace tandem::text {

struct TokenizerJsonFile {
  // The file, except that model.vocab (when an object) and model.merges (when an array) are
  // null: their contents are below.
  nlohmann::json root;
  bool has_vocab = false;  // model.vocab was an object
  // model.vocab's (piece, id) pairs in file order (a repeated piece appears twice).
  std::vector<std::pair<std::string, int64_t>> vocab;
  bool has_merges = false;  // model.merges was an array
  // model.merges as (left, right) pieces; rank = index. Each was "left right" (one space) or
  // ["left", "right"].
  std::vector<std::pair<std::string, std::string>> merges;
};

// The bytes of the tokenizer file `path` (a regular file; a FIFO is refused, not waited on).
// Errors: kNotFound "cannot open '<path>'; expected <expected>" (e.g. "tokenizer_config.json");
// the others of ReadRegularFile (core/regular_file.h).
Result<std::string> ReadTokenizerFile(const std::string& path, const std::string& expected);

// Reads `path` (a regular file; a FIFO is refused, not waited on).
// Errors: kNotFound (no such file, naming it and that a tokenizer JSON file was expected);
// kInvalidArgument naming the file and what was wrong: not valid JSON (nlohmann's message, with
// the byte offset), nesting past kMaxJsonDepth or a size limit of core/json_limits.h in the
// rest of the file, a model.vocab value that is not an integer id (naming the piece), a merge
// that is neither "a b" nor ["a", "b"] (naming its rank).
// Reference: HF tokenizers' serialized BPE model (tokenizers/src/models/bpe/serialization.rs).
Result<TokenizerJsonFile> ReadTokenizerJson(const std::string& path);

// file->merges, moved out (empty when the file has none). Errors: kInvalidArgument when
// model.merges is present but not a list ("'<path>': model.merges should be a list").
Result<std::vector<std::pair<std::string, std::string>>> TakeMerges(TokenizerJsonFile* file,
                                                                    const std::string& path);

}  // namespace tandem::text
