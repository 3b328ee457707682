#include "text/byte_level_bpe_tokenizer.h"

#include <algorithm>
#include <queue>

#include "core/utf8.h"
#include "text/byte_level_alphabet.h"
#include "text/nfc_normalizer.h"
#include "text/utf8.h"

namespace tandem::text {
namespace {

// HF caches words up to 256 bytes too; longer ones are rare and would crowd the cache.
constexpr size_t kMaxCachedWordBytes = 256;
constexpr size_t kWordCacheCapacity = 1 << 16;

uint64_t PairKey(int32_t left_id, int32_t right_id) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left_id)) << 32) |
         static_cast<uint32_t>(right_id);
}

struct Symbol {
  int32_t id;
  int prev;
  int next;
  bool alive;
};

struct Candidate {
  int32_t rank;
  int left;  // symbol index
  int32_t left_id;
  int32_t right_id;
  int32_t merged_id;
};

// Lowest rank first, leftmost on ties (HF models/bpe/word.rs Merge ordering).
struct CandidateAfter {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
};

}  // namespace

Result<std::unique_ptr<ByteLevelBpeTokenizer>> ByteLevelBpeTokenizer::Create(
    ByteLevelBpeVocab vocab) {
  size_t n = vocab.tokens.size();
  if (n == 0) return InvalidArgument("byte-level BPE vocab is empty; expected at least 256 pieces");
  if (vocab.token_types.empty()) {
    vocab.token_types.assign(n, static_cast<int32_t>(TokenType::kNormal));
  }
  if (vocab.token_types.size() != n) {
    return InvalidArgument("byte-level BPE vocab has " + std::to_string(n) + " tokens but " +
                           std::to_string(vocab.token_types.size()) +
                           " token types; expected one per token");
  }
  for (auto [name, id] : {std::pair{"bos", vocab.bos_id}, std::pair{"eos", vocab.eos_id}}) {
    if (id < -1 || id >= static_cast<int32_t>(n)) {
      return InvalidArgument(std::string(name) + " token id " + std::to_string(id) +
                             " is outside the vocab [0, " + std::to_string(n) + ")");
    }
  }
  if (vocab.add_bos && vocab.bos_id < 0) {
    return InvalidArgument("add_bos is set but the vocab has no BOS token");
  }
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer(new ByteLevelBpeTokenizer(std::move(vocab)));
  TANDEM_RETURN_IF_ERROR(tokenizer->BuildTables());
  return tokenizer;
}

ByteLevelBpeTokenizer::ByteLevelBpeTokenizer(ByteLevelBpeVocab vocab)
    : vocab_(std::move(vocab)), word_cache_(kWordCacheCapacity) {}

Status ByteLevelBpeTokenizer::BuildTables() {
  byte_id_.fill(-1);
  starts_added_token_.fill(false);
  token_bytes_.resize(vocab_.tokens.size());
  std::unordered_map<std::string_view, int32_t> id_of_piece;  // alphabet form, for the merges
  id_of_piece.reserve(vocab_.tokens.size());                  // no rehash while 151k pieces go in
  id_of_bytes_.reserve(vocab_.tokens.size());
  for (int32_t id = 0; id < vocab_size(); ++id) {
    const std::string& piece = vocab_.tokens[id];
    switch (static_cast<TokenType>(vocab_.token_types[id])) {
      case TokenType::kControl:
      case TokenType::kUserDefined:
        token_bytes_[id] = piece;
        if (!piece.empty()) {
          added_tokens_.emplace_back(piece, id);
          starts_added_token_[static_cast<uint8_t>(piece[0])] = true;
        }
        break;
      case TokenType::kUnused:
        break;
      default: {
        ByteLevelDecode(piece, &token_bytes_[id]);
        id_of_piece.emplace(piece, id);
        id_of_bytes_.emplace(token_bytes_[id], id);
        if (token_bytes_[id].size() == 1) {
          int32_t& slot = byte_id_[static_cast<uint8_t>(token_bytes_[id][0])];
          if (slot < 0) slot = id;
        }
      }
    }
  }
  std::stable_sort(added_tokens_.begin(), added_tokens_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  merges_.reserve(vocab_.merges.size());
  std::string merged;
  for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
    const auto& [left, right] = vocab_.merges[rank];
    merged = left + right;
    auto l = id_of_piece.find(left);
    auto r = id_of_piece.find(right);
    auto m = id_of_piece.find(merged);
    if (l == id_of_piece.end() || r == id_of_piece.end() || m == id_of_piece.end()) {
      return InvalidArgument("merge #" + std::to_string(rank) + " (\"" + left + "\", \"" + right +
                             "\") uses a piece that is not in the vocab; expected \"" + left +
                             "\", \"" + right + "\" and \"" + merged + "\" all to be tokens");
    }
    merges_.emplace(PairKey(l->second, r->second),
                    Merge{static_cast<int32_t>(rank), m->second});  // lowest rank wins
  }
  for (const std::string& pattern : vocab_.split_patterns) {
    TANDEM_ASSIGN_OR_RETURN(std::unique_ptr<RegexSplitter> splitter,
                            RegexSplitter::Create(pattern));
    splitters_.push_back(std::move(splitter));
  }
  return Status::Ok();
}

std::string ByteLevelBpeTokenizer::IdToPiece(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  return vocab_.tokens[id];
}

std::string ByteLevelBpeTokenizer::TokenBytes(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  return token_bytes_[id];
}

bool ByteLevelBpeTokenizer::IsSpecial(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return false;
  auto type = static_cast<TokenType>(vocab_.token_types[id]);
  return type == TokenType::kControl || type == TokenType::kUnknown;
}

std::vector<int32_t> ByteLevelBpeTokenizer::Encode(std::string_view text,
                                                   bool add_special_tokens) const {
  return EncodeText(text, add_special_tokens, /*match_added_tokens=*/true);
}

std::vector<int32_t> ByteLevelBpeTokenizer::EncodeText(std::string_view text,
                                                       bool add_special_tokens,
                                                       bool match_added_tokens) const {
  std::string sanitized;
  if (!IsValidUtf8(text)) {
    sanitized = SanitizeUtf8(text);
    text = sanitized;
  }
  std::vector<int32_t> ids;
  if (add_special_tokens && vocab_.add_bos) ids.push_back(vocab_.bos_id);
  size_t fragment_start = 0;
  size_t pos = 0;
  while (match_added_tokens && pos < text.size()) {
    const std::pair<std::string, int32_t>* match = nullptr;
    if (starts_added_token_[static_cast<uint8_t>(text[pos])]) {
      for (const auto& added : added_tokens_) {  // longest first
        if (text.compare(pos, added.first.size(), added.first) == 0) {
          match = &added;
          break;
        }
      }
    }
    if (match == nullptr) {
      ++pos;
      continue;
    }
    EncodeFragment(text.substr(fragment_start, pos - fragment_start), &ids);
    ids.push_back(match->second);
    pos += match->first.size();
    fragment_start = pos;
  }
  EncodeFragment(text.substr(fragment_start), &ids);
  return ids;
}

void ByteLevelBpeTokenizer::EncodeFragment(std::string_view fragment,
                                           std::vector<int32_t>* out) const {
  if (fragment.empty()) return;
  std::string text = vocab_.normalize_nfc ? NormalizeNfc(fragment) : std::string(fragment);
  if (vocab_.add_prefix_space && text[0] != ' ') text.insert(text.begin(), ' ');
  std::vector<std::string_view> words = {text};
  std::vector<std::string_view> next;
  for (const auto& splitter : splitters_) {
    next.clear();
    for (std::string_view word : words) splitter->Split(word, &next);
    words.swap(next);
  }
  for (std::string_view word : words) EncodeWord(word, out);
}

void ByteLevelBpeTokenizer::EncodeWord(std::string_view word, std::vector<int32_t>* out) const {
  if (word.size() > kMaxCachedWordBytes) {
    MergeWord(word, out);
    return;
  }
  if (word_cache_.Lookup(word, out)) return;
  size_t first = out->size();
  MergeWord(word, out);
  word_cache_.Insert(word, std::vector<int32_t>(out->begin() + first, out->end()));
}

const ByteLevelBpeTokenizer::Merge* ByteLevelBpeTokenizer::FindMerge(int32_t left_id,
                                                                     int32_t right_id) const {
  auto it = merges_.find(PairKey(left_id, right_id));
  return it == merges_.end() ? nullptr : &it->second;
}

void ByteLevelBpeTokenizer::MergeWord(std::string_view word, std::vector<int32_t>* out) const {
  if (vocab_.ignore_merges) {
    auto it = id_of_bytes_.find(word);
    if (it != id_of_bytes_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (char c : word) {
    int32_t id = byte_id_[static_cast<uint8_t>(c)];
    if (id < 0) continue;  // no token for this byte and no <unk>: dropped, as HF does
    int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, index + 1, true});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::priority_queue<Candidate, std::vector<Candidate>, CandidateAfter> queue;
  auto consider = [&](int left) {
    if (left < 0 || symbols[left].next < 0) return;
    int32_t left_id = symbols[left].id;
    int32_t right_id = symbols[symbols[left].next].id;
    if (const Merge* merge = FindMerge(left_id, right_id)) {
      queue.push({merge->rank, left, left_id, right_id, merge->merged_id});
    }
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    // Stale: the left symbol or its right neighbour changed since this pair was queued.
    if (!left.alive || left.id != top.left_id || left.next < 0 ||
        symbols[left.next].id != top.right_id) {
      continue;
    }
    Symbol& right = symbols[left.next];
    left.id = top.merged_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    consider(left.prev);
    consider(top.left);
  }
  for (int i = 0; i >= 0; i = symbols[i].next) out->push_back(symbols[i].id);
}

}  // namespace tandem::text
