#include "engine/block_hash.h"

#include <xxhash.h>

#include <cstring>

#include "core/check.h"

namespace tandem::engine {

BlockHash HashBlockTokens(BlockHash parent_hash, std::span<const int32_t> token_ids) {
  // One contiguous buffer [parent_hash (8 bytes LE), token ids (4 bytes LE each)]; a block is
  // small (block_size ids), so this stays on the stack for the usual sizes.
  constexpr size_t kInlineTokens = 64;
  const size_t size_bytes = sizeof(parent_hash) + token_ids.size_bytes();
  unsigned char inline_buffer[sizeof(BlockHash) + kInlineTokens * sizeof(int32_t)];
  std::vector<unsigned char> heap_buffer;
  unsigned char* buffer = inline_buffer;
  if (token_ids.size() > kInlineTokens) {
    heap_buffer.resize(size_bytes);
    buffer = heap_buffer.data();
  }
  std::memcpy(buffer, &parent_hash, sizeof(parent_hash));
  std::memcpy(buffer + sizeof(parent_hash), token_ids.data(), token_ids.size_bytes());
  return XXH3_64bits(buffer, size_bytes);
}

BlockHash RootBlockHash(std::string_view cache_salt) {
  if (cache_salt.empty()) return kRootBlockHash;
  return XXH3_64bits_withSeed(cache_salt.data(), cache_salt.size(), kRootBlockHash);
}

void AppendFullBlockHashes(std::span<const int32_t> token_ids, int32_t block_size,
                           std::vector<BlockHash>* block_hashes, BlockHash root_hash) {
  TANDEM_CHECK(block_size > 0) << "block_size must be positive, got " << block_size;
  const size_t num_full_blocks = token_ids.size() / static_cast<size_t>(block_size);
  while (block_hashes->size() < num_full_blocks) {
    const size_t block_idx = block_hashes->size();
    const BlockHash parent = block_idx == 0 ? root_hash : (*block_hashes)[block_idx - 1];
    block_hashes->push_back(
        HashBlockTokens(parent, token_ids.subspan(block_idx * block_size, block_size)));
  }
}

}  // namespace tandem::engine
