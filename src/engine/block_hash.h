// Chained block hashes for prefix caching: a full block's hash covers its tokens and, through
// the parent hash, every token before it, so equal hashes mean equal prefixes.
// Reference: vLLM v1 kv_cache_utils.hash_block_tokens / request block hasher. Deviation: xxh3_64
// over (parent hash, token ids) instead of sha256/pickle; no extra keys (LoRA, multimodal) yet.
// A 64-bit collision would silently reuse a wrong block; at 2^-64 per pair of distinct
// prefixes that risk is accepted, as vLLM accepts it for its builtin-hash option.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tandem::engine {

using BlockHash = uint64_t;

// Parent hash of the first block of every request (vLLM: NONE_HASH). Fixed, so hashes agree
// across processes and DP ranks.
inline constexpr BlockHash kRootBlockHash = 0x7a6e64656d2d6b76ULL;

// The parent hash of a request's first block: kRootBlockHash, or a hash of it with the request's
// cache_salt (vLLM: the salt is an extra key of the first block only), so requests with
// different salts never share cached blocks and equal salts do.
BlockHash RootBlockHash(std::string_view cache_salt);

// xxh3_64 of (parent_hash, token_ids). `token_ids` are the block_size ids of one full block.
BlockHash HashBlockTokens(BlockHash parent_hash, std::span<const int32_t> token_ids);

// Extends `block_hashes` with the hashes of every full block of `token_ids` it does not hold
// yet (block i covers token_ids[i*block_size, (i+1)*block_size)). Partial last blocks get none.
// `root_hash`: the first block's parent (RootBlockHash of the request's salt).
void AppendFullBlockHashes(std::span<const int32_t> token_ids, int32_t block_size,
                           std::vector<BlockHash>* block_hashes,
                           BlockHash root_hash = kRootBlockHash);

}  // namespace tandem::engine
