// ForwardContext: the attention metadata of one forward pass, passed explicitly (no globals).
// The batch is a flat list of tokens; sequences lie one after another (vLLM V1 layout).
#pragma once

#include <cstdint>
#include <vector>

namespace tandem::model {

struct ForwardContext {
  std::vector<int32_t> token_ids;        // [num_tokens] int32: input token of each row
  std::vector<int32_t> positions;        // [num_tokens] int32: position in its sequence (0-based)
  std::vector<int64_t> slot_mapping;     // [num_tokens] int64: block_id * block_size + offset,
                                         //   where this token's K/V are written; -1 = padding
  std::vector<int32_t> query_start_loc;  // [num_seqs + 1] int32: first row of each sequence
  std::vector<int32_t> seq_lens;         // [num_seqs] int32: context length incl. this step
  std::vector<std::vector<int32_t>> block_tables;  // [num_seqs][num_blocks_of_seq] block ids
  std::vector<int32_t> logits_indices;    // [num_logits] int32: rows whose logits are wanted
                                          //   (the last scheduled token of each sampling seq)
  std::vector<int32_t> state_slots;       // [num_seqs] int32: each sequence's state slot in the
                                          //   linear-attention layers' caches (hybrid models)
  std::vector<int32_t> num_draft_tokens;  // [num_seqs] int32 or empty: drafts a sequence verifies
                                          //   (speculative decoding); a recurrent layer keeps its
                                          //   state after each of the last drafts + 1 rows until
                                          //   Model::CommitSpeculativeStates picks one
  int32_t block_size = 16;                // tokens per KV block

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  int32_t num_seqs() const { return static_cast<int32_t>(seq_lens.size()); }
};

}  // namespace tandem::model
