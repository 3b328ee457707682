// Central invariant of the merge loop: the symbols always concatenate to the escaped fragment,
// and a merge is applied only when the merged text is a vocab piece, so every multi-character
// symbol at the end is a piece; single characters outside the vocab fall back to bytes.
#include "text/spm_bpe_tokenizer.h"

#include <algorithm>
#include <queue>

#include "text/utf8.h"

namespace tandem::text {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581 '▁'

// 0xFF never occurs in UTF-8, so it cannot be part of either piece.
std::string MergeKey(std::string_view left, std::string_view right) {
  std::string key(left);
  key += '\xFF';
  key += right;
  return key;
}

// "<0x0A>" -> 10; -1 when `piece` is not of that form.
int ParseBytePiece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  int value = 0;
  for (char c : piece.substr(3, 2)) {
    int digit = (c >= '0' && c <= '9')   ? c - '0'
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                         : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

struct Symbol {
  int prev;
  int next;
  const char* text;
  size_t size_bytes;  // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  double priority;
  size_t size_bytes;  // of the merged text, to detect stale entries
};

// Highest priority first; leftmost first on ties (llama.cpp llm_bigram_spm::comparator).
struct BigramLess {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
  }
};

}  // namespace

Result<std::unique_ptr<SpmBpeTokenizer>> SpmBpeTokenizer::Create(SpmVocab vocab) {
  size_t n = vocab.tokens.size();
  if (n == 0) return InvalidArgument("SentencePiece vocab is empty; expected at least one piece");
  if (vocab.scores.empty()) vocab.scores.assign(n, 0.0f);
  if (vocab.token_types.empty())
    vocab.token_types.assign(n, static_cast<int32_t>(TokenType::kNormal));
  if (vocab.scores.size() != n || vocab.token_types.size() != n) {
    return InvalidArgument("SentencePiece vocab has " + std::to_string(n) + " tokens but " +
                           std::to_string(vocab.scores.size()) + " scores and " +
                           std::to_string(vocab.token_types.size()) +
                           " token types; expected one of each per token");
  }
  for (auto [name, id] : {std::pair{"bos", vocab.bos_id}, std::pair{"eos", vocab.eos_id},
                          std::pair{"unk", vocab.unk_id}}) {
    if (id < -1 || id >= static_cast<int32_t>(n)) {
      return InvalidArgument(std::string(name) + " token id " + std::to_string(id) +
                             " is outside the vocab [0, " + std::to_string(n) + ")");
    }
  }
  if (vocab.add_bos && vocab.bos_id < 0) {
    return InvalidArgument("add_bos is set but the vocab has no BOS token");
  }
  return std::unique_ptr<SpmBpeTokenizer>(new SpmBpeTokenizer(std::move(vocab)));
}

SpmBpeTokenizer::SpmBpeTokenizer(SpmVocab vocab) : vocab_(std::move(vocab)) {
  std::fill(std::begin(byte_to_id_), std::end(byte_to_id_), -1);
  for (int32_t id = 0; id < vocab_size(); ++id) {
    const std::string& piece = vocab_.tokens[id];
    piece_to_id_.emplace(piece, id);  // first id wins for duplicate pieces
    auto type = static_cast<TokenType>(vocab_.token_types[id]);
    int byte = ParseBytePiece(piece);
    if (byte >= 0 && (type == TokenType::kByte || type == TokenType::kNormal) &&
        byte_to_id_[byte] < 0) {
      byte_to_id_[byte] = id;
      vocab_.token_types[id] = static_cast<int32_t>(TokenType::kByte);
    }
    if ((type == TokenType::kControl || type == TokenType::kUserDefined ||
         type == TokenType::kUnknown) &&
        !piece.empty()) {
      special_pieces_.emplace_back(piece, id);
    }
  }
  std::stable_sort(special_pieces_.begin(), special_pieces_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
    const auto& [left, right] = vocab_.merges[rank];
    merge_rank_.emplace(MergeKey(left, right), static_cast<int32_t>(rank));
  }
}

std::string SpmBpeTokenizer::PieceOrEmpty(int32_t id) const {
  return id >= 0 ? vocab_.tokens[id] : std::string();
}

std::string SpmBpeTokenizer::IdToPiece(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  return vocab_.tokens[id];
}

bool SpmBpeTokenizer::IsSpecial(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return false;
  auto type = static_cast<TokenType>(vocab_.token_types[id]);
  return type == TokenType::kControl || type == TokenType::kUnknown;
}

std::string SpmBpeTokenizer::TokenBytes(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return "";
  const std::string& piece = vocab_.tokens[id];
  if (static_cast<TokenType>(vocab_.token_types[id]) == TokenType::kByte) {
    return std::string(1, static_cast<char>(ParseBytePiece(piece)));
  }
  std::string out;
  size_t pos = 0;
  while (pos < piece.size()) {
    if (piece.compare(pos, kSpaceMarker.size(), kSpaceMarker) == 0) {
      out += ' ';
      pos += kSpaceMarker.size();
    } else {
      out += piece[pos++];
    }
  }
  return out;
}

std::vector<int32_t> SpmBpeTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (add_special_tokens && vocab_.add_bos) ids.push_back(vocab_.bos_id);
  // Split on special pieces (HF added_tokens / llama.cpp parse_special): each plain fragment
  // gets its own dummy prefix, as both references do.
  size_t fragment_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const std::pair<std::string, int32_t>* match = nullptr;
    for (const auto& special : special_pieces_) {
      if (text.compare(pos, special.first.size(), special.first) == 0) {
        match = &special;
        break;
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

bool SpmBpeTokenizer::MergePriority(std::string_view left, std::string_view right,
                                    double* priority) const {
  if (!vocab_.merges.empty()) {
    auto it = merge_rank_.find(MergeKey(left, right));
    if (it == merge_rank_.end()) return false;
    *priority = -static_cast<double>(it->second);  // lowest rank first
    return true;
  }
  // The symbols are adjacent in one buffer, so the merged text is contiguous.
  std::string_view merged(left.data(), left.size() + right.size());
  auto it = piece_to_id_.find(std::string(merged));
  if (it == piece_to_id_.end()) return false;
  *priority = vocab_.scores[it->second];
  return true;
}

void SpmBpeTokenizer::EncodeFragment(std::string_view text, std::vector<int32_t>* out) const {
  if (text.empty()) return;
  std::string escaped;
  if (vocab_.add_space_prefix) escaped += kSpaceMarker;
  for (char c : text) {
    if (c == ' ') {
      escaped += kSpaceMarker;
    } else {
      escaped += c;
    }
  }
  std::vector<Symbol> symbols;
  for (std::string_view ch : SplitUtf8Chars(escaped)) {
    int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, index + 1, ch.data(), ch.size()});
  }
  symbols.back().next = -1;

  std::priority_queue<Bigram, std::vector<Bigram>, BigramLess> agenda;
  auto try_add_bigram = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    std::string_view l(symbols[left].text, symbols[left].size_bytes);
    std::string_view r(symbols[right].text, symbols[right].size_bytes);
    double priority;
    if (!MergePriority(l, r, &priority)) return;
    agenda.push({left, right, priority, l.size() + r.size()});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add_bigram(i - 1, i);

  while (!agenda.empty()) {
    Bigram bigram = agenda.top();
    agenda.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    // Stale entry: one side was merged elsewhere since it was queued.
    if (left.size_bytes == 0 || right.size_bytes == 0 ||
        left.size_bytes + right.size_bytes != bigram.size_bytes) {
      continue;
    }
    left.size_bytes += right.size_bytes;
    right.size_bytes = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add_bigram(left.prev, bigram.left);
    try_add_bigram(bigram.left, left.next);
  }
  for (int i = 0; i != -1; i = symbols[i].next) {
    AppendSymbolIds(std::string_view(symbols[i].text, symbols[i].size_bytes), out);
  }
}

void SpmBpeTokenizer::AppendSymbolIds(std::string_view symbol, std::vector<int32_t>* out) const {
  auto it = piece_to_id_.find(std::string(symbol));
  if (it != piece_to_id_.end()) {
    out->push_back(it->second);
    return;
  }
  for (char c : symbol) {
    int32_t id = byte_to_id_[static_cast<uint8_t>(c)];
    if (id < 0) id = vocab_.unk_id;
    if (id >= 0) out->push_back(id);  // no byte piece and no <unk>: the byte is dropped
  }
}

}  // namespace tandem::text
