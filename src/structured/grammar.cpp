#include "structured/grammar.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/check.h"

namespace tandem::structured {

const Expr* Grammar::Find(const std::string& name) const {
  if (index_.size() != rules.size()) {  // rules appended to directly: index them again
    index_.clear();
    for (size_t i = 0; i < rules.size(); ++i) {
      index_.emplace(rules[i].first, i);
    }
  }
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &rules[it->second].second;
}

void Grammar::Add(std::string name, Expr body) {
  TANDEM_CHECK(Find(name) == nullptr) << "grammar rule '" << name << "' defined twice";
  index_.emplace(name, rules.size());
  rules.emplace_back(std::move(name), std::move(body));
}

Expr Empty() { return Expr{}; }

Expr Literal(std::string utf8) {
  if (utf8.empty()) {
    return Empty();
  }
  Expr e;
  e.kind = Expr::Kind::kLiteral;
  e.literal = std::move(utf8);
  return e;
}

Expr CharClass(std::vector<CodepointRange> ranges, bool negated) {
  std::vector<CodepointRange> clipped;
  for (CodepointRange r : ranges) {
    if (r.lo > r.hi || r.lo > kMaxCodepoint) {
      continue;
    }
    r.hi = std::min(r.hi, kMaxCodepoint);
    // Drop the surrogates: they are not code points UTF-8 can encode.
    if (r.lo < 0xD800 && r.hi >= 0xD800) {
      if (r.hi > 0xDFFF) {
        clipped.push_back({0xE000, r.hi});
      }
      r.hi = 0xD7FF;
    } else if (r.lo >= 0xD800 && r.lo <= 0xDFFF) {
      if (r.hi <= 0xDFFF) {
        continue;
      }
      r.lo = 0xE000;
    }
    clipped.push_back(r);
  }
  std::sort(clipped.begin(), clipped.end(),
            [](const CodepointRange& a, const CodepointRange& b) { return a.lo < b.lo; });
  std::vector<CodepointRange> merged;
  for (const CodepointRange& r : clipped) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  if (negated) {
    std::vector<CodepointRange> complement;
    uint32_t next = 0;
    for (const CodepointRange& r : merged) {
      if (r.lo > next) {
        complement.push_back({next, r.lo - 1});
      }
      next = r.hi + 1;
    }
    if (next <= kMaxCodepoint) {
      complement.push_back({next, kMaxCodepoint});
    }
    return CharClass(std::move(complement), false);  // drops the surrogates again
  }
  Expr e;
  e.kind = Expr::Kind::kCharClass;
  e.ranges = std::move(merged);
  return e;
}

Expr AnyCodepoint() { return CharClass({{0, kMaxCodepoint}}); }

namespace {

Expr Flatten(Expr::Kind kind, std::vector<Expr> children) {
  std::vector<Expr> flat;
  for (Expr& child : children) {
    if (kind == Expr::Kind::kSequence && child.kind == Expr::Kind::kEmpty) {
      continue;
    }
    if (child.kind == kind) {
      for (Expr& grandchild : child.children) {
        flat.push_back(std::move(grandchild));
      }
    } else if (kind == Expr::Kind::kSequence && child.kind == Expr::Kind::kLiteral &&
               !flat.empty() && flat.back().kind == Expr::Kind::kLiteral) {
      flat.back().literal += child.literal;  // adjacent literals join
    } else {
      flat.push_back(std::move(child));
    }
  }
  if (flat.empty()) {
    return Empty();
  }
  if (flat.size() == 1) {
    return std::move(flat.front());
  }
  Expr e;
  e.kind = kind;
  e.children = std::move(flat);
  return e;
}

}  // namespace

Expr Sequence(std::vector<Expr> children) {
  return Flatten(Expr::Kind::kSequence, std::move(children));
}

Expr Choice(std::vector<Expr> children) {
  TANDEM_CHECK(!children.empty()) << "a grammar choice needs at least one alternative";
  return Flatten(Expr::Kind::kChoice, std::move(children));
}

Expr Repeat(Expr child, int32_t min_repeat, int32_t max_repeat) {
  TANDEM_CHECK(min_repeat >= 0 && (max_repeat < 0 || max_repeat >= min_repeat))
      << "bad repetition bounds {" << min_repeat << "," << max_repeat << "}";
  if (max_repeat == 0 || child.kind == Expr::Kind::kEmpty) {
    return Empty();
  }
  if (min_repeat == 1 && max_repeat == 1) {
    return child;
  }
  Expr e;
  e.kind = Expr::Kind::kRepeat;
  e.children.push_back(std::move(child));
  e.min_repeat = min_repeat;
  e.max_repeat = max_repeat;
  return e;
}

Expr Optional(Expr child) { return Repeat(std::move(child), 0, 1); }
Expr Star(Expr child) { return Repeat(std::move(child), 0, -1); }
Expr Plus(Expr child) { return Repeat(std::move(child), 1, -1); }

Expr RuleRef(std::string name) {
  Expr e;
  e.kind = Expr::Kind::kRuleRef;
  e.rule = std::move(name);
  return e;
}

std::string EncodeUtf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

namespace {

// A code point inside "..." or [...]: printable ASCII as itself (the delimiters and backslash
// escaped), other ASCII as \xHH, the rest as \uHHHH / \UHHHHHHHH in classes and as raw UTF-8
// in literals.
std::string EscapeCodepoint(uint32_t cp, bool in_class) {
  switch (cp) {
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      break;
  }
  if (!in_class && cp == '"') {
    return "\\\"";
  }
  if (in_class && (cp == ']' || cp == '^' || cp == '-' || cp == '[')) {
    return std::string("\\") + static_cast<char>(cp);
  }
  if (cp >= 0x20 && cp < 0x7F) {
    return std::string(1, static_cast<char>(cp));
  }
  if (cp < 0x80) {
    return fmt::format("\\x{:02X}", cp);
  }
  if (!in_class) {
    return EncodeUtf8(cp);
  }
  if (cp < 0x10000) {
    return fmt::format("\\u{:04X}", cp);
  }
  return fmt::format("\\U{:08X}", cp);
}

void PrintExpr(const Expr& e, bool in_sequence, std::string* out) {
  switch (e.kind) {
    case Expr::Kind::kEmpty:
      *out += "\"\"";
      return;
    case Expr::Kind::kLiteral: {
      *out += '"';
      // Bytes < 0x80 one by one; a multi-byte sequence is copied as it is (valid UTF-8 by
      // construction of every compiler).
      for (unsigned char c : e.literal) {
        if (c < 0x80) {
          *out += EscapeCodepoint(c, false);
        } else {
          *out += static_cast<char>(c);
        }
      }
      *out += '"';
      return;
    }
    case Expr::Kind::kCharClass:
      *out += '[';
      for (const CodepointRange& r : e.ranges) {
        *out += EscapeCodepoint(r.lo, true);
        if (r.hi != r.lo) {
          *out += "-" + EscapeCodepoint(r.hi, true);
        }
      }
      *out += ']';
      return;
    case Expr::Kind::kSequence:
      if (!in_sequence) {
        *out += '(';
      }
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (i > 0) {
          *out += ' ';
        }
        PrintExpr(e.children[i], false, out);
      }
      if (!in_sequence) {
        *out += ')';
      }
      return;
    case Expr::Kind::kChoice:
      *out += '(';
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (i > 0) {
          *out += " | ";
        }
        PrintExpr(e.children[i], true, out);
      }
      *out += ')';
      return;
    case Expr::Kind::kRepeat:
      if (e.children[0].kind == Expr::Kind::kRepeat) {  // "x?*" is not GBNF: "(x?)*"
        *out += '(';
        PrintExpr(e.children[0], true, out);
        *out += ')';
      } else {
        PrintExpr(e.children[0], false, out);
      }
      if (e.min_repeat == 0 && e.max_repeat == 1) {
        *out += '?';
      } else if (e.min_repeat == 0 && e.max_repeat < 0) {
        *out += '*';
      } else if (e.min_repeat == 1 && e.max_repeat < 0) {
        *out += '+';
      } else if (e.max_repeat < 0) {
        *out += fmt::format("{{{},}}", e.min_repeat);
      } else if (e.max_repeat == e.min_repeat) {
        *out += fmt::format("{{{}}}", e.min_repeat);
      } else {
        *out += fmt::format("{{{},{}}}", e.min_repeat, e.max_repeat);
      }
      return;
    case Expr::Kind::kRuleRef:
      *out += e.rule;
      return;
  }
}

}  // namespace

std::string ToGbnf(const Grammar& grammar) {
  std::string out;
  auto print_rule = [&](const std::string& name, const Expr& body) {
    out += name + " ::= ";
    PrintExpr(body, true, &out);
    out += '\n';
  };
  if (const Expr* root = grammar.Find(grammar.root)) {
    print_rule(grammar.root, *root);
  }
  for (const auto& [name, body] : grammar.rules) {
    if (name != grammar.root) {
      print_rule(name, body);
    }
  }
  return out;
}

}  // namespace tandem::structured
