// Test helpers for structured/: a naive reference matcher over the Grammar IR, written
// independently of the automaton so that each checks the other.
#pragma once

#include <set>
#include <string_view>

#include "structured/grammar.h"

namespace tandem::structured::testing {

// Decodes one UTF-8 code point of `text` at `pos` into *cp and returns its length, or 0 when
// the bytes there are not valid UTF-8 (overlong, surrogate, truncated, > U+10FFFF).
inline size_t DecodeUtf8At(std::string_view text, size_t pos, uint32_t* cp) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  if (pos >= text.size()) return 0;
  const unsigned char c = b(0);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || pos + len > text.size()) return 0;
  uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < len; ++i) {
    if ((b(i) >> 6) != 2) return 0;
    v = (v << 6) | (b(i) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > kMaxCodepoint || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

// End positions reachable by matching `e` from each of `starts` in `text`.
inline std::set<size_t> MatchFrom(const Grammar& g, const Expr& e, std::string_view text,
                                  const std::set<size_t>& starts) {
  std::set<size_t> out;
  if (starts.empty()) return out;  // nothing to match from: stop (recursive rules would loop)
  switch (e.kind) {
    case Expr::Kind::kEmpty:
      return starts;
    case Expr::Kind::kLiteral:
      for (size_t p : starts) {
        if (text.substr(p).starts_with(e.literal)) out.insert(p + e.literal.size());
      }
      return out;
    case Expr::Kind::kCharClass:
      for (size_t p : starts) {
        uint32_t cp = 0;
        const size_t len = DecodeUtf8At(text, p, &cp);
        if (len == 0) continue;
        for (const CodepointRange& r : e.ranges) {
          if (cp >= r.lo && cp <= r.hi) out.insert(p + len);
        }
      }
      return out;
    case Expr::Kind::kSequence: {
      std::set<size_t> current = starts;
      for (const Expr& child : e.children) current = MatchFrom(g, child, text, current);
      return current;
    }
    case Expr::Kind::kChoice:
      for (const Expr& child : e.children) {
        for (size_t p : MatchFrom(g, child, text, starts)) out.insert(p);
      }
      return out;
    case Expr::Kind::kRepeat: {
      std::set<size_t> current = starts;
      if (e.min_repeat == 0) out = starts;
      const size_t cap =
          e.max_repeat >= 0 ? static_cast<size_t>(e.max_repeat) : e.min_repeat + text.size() + 1;
      for (size_t i = 1; i <= cap && !current.empty(); ++i) {
        current = MatchFrom(g, e.children[0], text, current);
        if (i >= static_cast<size_t>(e.min_repeat)) out.insert(current.begin(), current.end());
      }
      return out;
    }
    case Expr::Kind::kRuleRef: {
      const Expr* body = g.Find(e.rule);
      return body ? MatchFrom(g, *body, text, starts) : out;
    }
  }
  return out;
}

// True when the whole of `text` matches the grammar's root rule. Left-recursive grammars
// recurse forever: the reference is for the grammars compilers produce, which never are.
inline bool ReferenceMatch(const Grammar& g, std::string_view text) {
  const Expr* root = g.Find(g.root);
  if (root == nullptr) return false;
  return MatchFrom(g, *root, text, {0}).count(text.size()) > 0;
}

}  // namespace tandem::structured::testing
