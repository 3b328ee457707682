#include "text/jinja/parser.h"

#include <algorithm>
#include <set>
#include <string>

#include "text/jinja/error.h"

namespace tandem::text::jinja {
namespace {

using TK = Token::Kind;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  Body ParseTemplate() {
    Body body = ParseBody({});
    if (Peek().kind != TK::kEnd) Fail("unexpected '{% " + Peek().text + " %}'", Peek());
    return body;
  }

 private:
  // Statements until "{% <one of stop> ...": returns with the stop keyword as the next token.
  Body ParseBody(const std::set<std::string>& stop) {
    Body body;
    while (true) {
      const Token& token = Peek();
      if (token.kind == TK::kEnd) {
        for (const std::string& keyword : stop) {
          if (keyword.rfind("end", 0) == 0) {
            Fail("unexpected end of template, expected '{% " + keyword + " %}'", token);
          }
        }
        return body;
      }
      if (token.kind == TK::kText) {
        auto node = MakeNode(Node::Kind::kText, Next());
        node->text = token.text;
        body.push_back(std::move(node));
      } else if (token.kind == TK::kVarBegin) {
        auto node = MakeNode(Node::Kind::kOutput, Next());
        node->expr = ParseExpression();
        Expect(TK::kVarEnd, "'}}'");
        body.push_back(std::move(node));
      } else if (token.kind == TK::kBlockBegin) {
        const Token& keyword = tokens_[pos_ + 1];
        if (stop.count(keyword.text)) {
          ++pos_;
          return body;
        }
        ++pos_;
        body.push_back(ParseStatement());
      } else {
        Fail("unexpected token '" + token.text + "'", token);
      }
    }
  }

  NodePtr ParseStatement() {
    NestingGuard guard(this, Peek());
    const Token& keyword = Next();
    if (keyword.kind != TK::kName) Fail("expected a statement name after '{%'", keyword);
    if (keyword.text == "if") return ParseIf(keyword);
    if (keyword.text == "for") return ParseFor(keyword);
    if (keyword.text == "set") return ParseSet(keyword);
    if (keyword.text == "macro") return ParseMacro(keyword);
    if (keyword.text == "break" || keyword.text == "continue") {
      auto node =
          MakeNode(keyword.text == "break" ? Node::Kind::kBreak : Node::Kind::kContinue, keyword);
      Expect(TK::kBlockEnd, "'%}'");
      return node;
    }
    Fail("unknown or unsupported tag '" + keyword.text + "'", keyword);
  }

  NodePtr ParseIf(const Token& keyword) {
    auto node = MakeNode(Node::Kind::kIf, keyword);
    while (true) {
      ExprPtr cond = ParseExpression();
      Expect(TK::kBlockEnd, "'%}'");
      Body body = ParseBody({"elif", "else", "endif"});
      node->branches.emplace_back(std::move(cond), std::move(body));
      const Token& end = Next();
      if (end.text == "elif") continue;
      Expect(TK::kBlockEnd, "'%}'");
      if (end.text == "else") {
        node->else_body = ParseBody({"endif"});
        Next();
        Expect(TK::kBlockEnd, "'%}'");
      }
      return node;
    }
  }

  NodePtr ParseFor(const Token& keyword) {
    auto node = MakeNode(Node::Kind::kFor, keyword);
    do {
      node->targets.push_back(ExpectName("a loop variable"));
    } while (Accept(","));
    if (ExpectName("'in'") != "in") Fail("expected 'in' in for loop", tokens_[pos_ - 1]);
    node->expr = ParseOr();  // no ternary here: "if" starts the loop filter
    if (Peek().kind == TK::kName && Peek().text == "if") {
      Next();
      node->filter = ParseOr();
    }
    Expect(TK::kBlockEnd, "'%}'");
    node->body = ParseBody({"else", "endfor"});
    if (Next().text == "else") {
      Expect(TK::kBlockEnd, "'%}'");
      node->else_body = ParseBody({"endfor"});
      Next();
    }
    Expect(TK::kBlockEnd, "'%}'");
    return node;
  }

  NodePtr ParseSet(const Token& keyword) {
    auto node = MakeNode(Node::Kind::kSet, keyword);
    node->targets.push_back(ExpectName("a variable name"));
    if (Accept(".")) node->targets.push_back(ExpectName("an attribute name"));
    if (Peek().kind == TK::kBlockEnd) {  // {% set x %}...{% endset %}: x = the rendered body
      Next();
      node->body = ParseBody({"endset"});
      Next();
      Expect(TK::kBlockEnd, "'%}'");
      return node;
    }
    if (!Accept("=")) Fail("expected '=' or '%}' after the name in set", Peek());
    node->expr = ParseExpression();
    Expect(TK::kBlockEnd, "'%}'");
    return node;
  }

  NodePtr ParseMacro(const Token& keyword) {
    auto node = MakeNode(Node::Kind::kMacro, keyword);
    node->text = ExpectName("a macro name");
    ExpectOperator("(");
    while (!Accept(")")) {
      if (!node->targets.empty()) ExpectOperator(",");
      node->targets.push_back(ExpectName("a parameter name"));
      node->defaults.push_back(Accept("=") ? ParseExpression() : nullptr);
    }
    Expect(TK::kBlockEnd, "'%}'");
    node->body = ParseBody({"endmacro"});
    Next();
    Expect(TK::kBlockEnd, "'%}'");
    return node;
  }

  ExprPtr ParseExpression() {
    NestingGuard guard(this, Peek());
    ExprPtr value = ParseOr();
    while (Peek().kind == TK::kName && Peek().text == "if") {
      auto node = MakeExpr(Expr::Kind::kTernary, Next());
      Attach(node.get(), std::move(value));
      Attach(node.get(), ParseOr());
      Attach(node.get(), AcceptName("else") ? ParseExpression() : nullptr);
      value = std::move(node);
    }
    return value;
  }

  ExprPtr ParseOr() { return ParseBinaryLevel(0); }

  // Levels 0..5: or, and, (not), comparisons, + -, ~, * / // %.
  ExprPtr ParseBinaryLevel(int level) {
    static const std::vector<std::vector<std::string>> kLevels = {
        {"or"},
        {"and"},
        {},
        {"==", "!=", "<", ">", "<=", ">=", "in", "not"},
        {"+", "-"},
        {"~"},
        {"*", "/", "//", "%"}};
    if (level == 2) {  // "not" is a prefix operator between "and" and comparisons
      if (Peek().kind == TK::kName && Peek().text == "not") {
        NestingGuard guard(this, Peek());
        auto node = MakeExpr(Expr::Kind::kUnary, Next());
        node->name = "not";
        Attach(node.get(), ParseBinaryLevel(2));
        return node;
      }
      return ParseBinaryLevel(3);
    }
    if (level == static_cast<int>(kLevels.size())) return ParseUnary();
    ExprPtr left = ParseBinaryLevel(level + 1);
    while (true) {
      const Token& op = Peek();
      bool is_op = (op.kind == TK::kOperator || op.kind == TK::kName);
      bool matches = false;
      for (const std::string& candidate : kLevels[level]) matches |= is_op && op.text == candidate;
      if (!matches) return left;
      if (op.text == "not" &&
          !(tokens_[pos_ + 1].kind == TK::kName && tokens_[pos_ + 1].text == "in")) {
        return left;
      }
      auto node = MakeExpr(Expr::Kind::kBinary, Next());
      node->name = op.text;
      if (op.text == "not") {
        Next();
        node->name = "not in";
      }
      Attach(node.get(), std::move(left));
      Attach(node.get(), ParseBinaryLevel(level + 1));
      left = std::move(node);
    }
  }

  ExprPtr ParseUnary() {
    NestingGuard guard(this, Peek());
    if (Peek().kind == TK::kOperator && (Peek().text == "-" || Peek().text == "+")) {
      auto node = MakeExpr(Expr::Kind::kUnary, Peek());
      node->name = Next().text;
      Attach(node.get(), ParseUnary());
      return node;
    }
    return ParsePostfix(ParsePrimary());
  }

  ExprPtr ParsePrimary() {
    const Token& token = Next();
    switch (token.kind) {
      case TK::kString: {
        auto node = MakeExpr(Expr::Kind::kLiteral, token);
        std::string value = token.text;
        while (Peek().kind == TK::kString) value += Next().text;  // "a" "b" concatenates
        node->literal = value;
        return node;
      }
      case TK::kInteger:
      case TK::kFloat:
        try {  // Python's ints are unbounded; ours are int64, and floats double
          return Literal(token, token.kind == TK::kInteger ? Json(std::stoll(token.text))
                                                           : Json(std::stod(token.text)));
        } catch (const std::exception&) {
          Fail("number literal " + token.text.substr(0, 40) + " is out of range (int64 / double)",
               token);
        }
      case TK::kName:
        if (token.text == "true" || token.text == "True") return Literal(token, Json(true));
        if (token.text == "false" || token.text == "False") return Literal(token, Json(false));
        if (token.text == "none" || token.text == "None") return Literal(token, Json(nullptr));
        {
          auto node = MakeExpr(Expr::Kind::kName, token);
          node->name = token.text;
          return node;
        }
      case TK::kOperator:
        if (token.text == "(") return ParseParenthesized(token);
        if (token.text == "[") return ParseSequence(token, Expr::Kind::kList, "]");
        if (token.text == "{") return ParseDict(token);
        break;
      default:
        break;
    }
    Fail("expected an expression, found " + Describe(token), token);
  }

  ExprPtr ParseParenthesized(const Token& open) {
    if (Accept(")")) return MakeExpr(Expr::Kind::kTuple, open);
    ExprPtr first = ParseExpression();
    if (Accept(")")) return first;
    auto tuple = MakeExpr(Expr::Kind::kTuple, open);
    Attach(tuple.get(), std::move(first));
    while (Accept(",") && !(Peek().text == ")" && Peek().kind == TK::kOperator)) {
      Attach(tuple.get(), ParseExpression());
    }
    ExpectOperator(")");
    return tuple;
  }

  ExprPtr ParseSequence(const Token& open, Expr::Kind kind, const std::string& close) {
    auto node = MakeExpr(kind, open);
    while (!Accept(close)) {
      if (!node->args.empty()) ExpectOperator(",");
      if (Accept(close)) break;  // trailing comma
      Attach(node.get(), ParseExpression());
    }
    return node;
  }

  ExprPtr ParseDict(const Token& open) {
    auto node = MakeExpr(Expr::Kind::kDict, open);
    while (!Accept("}")) {
      if (!node->args.empty()) ExpectOperator(",");
      if (Accept("}")) break;
      Attach(node.get(), ParseExpression());
      ExpectOperator(":");
      Attach(node.get(), ParseExpression());
    }
    return node;
  }

  ExprPtr ParsePostfix(ExprPtr value) {
    while (true) {
      const Token& token = Peek();
      if (token.kind == TK::kOperator && token.text == ".") {
        Next();
        auto node = MakeExpr(Expr::Kind::kAttr, token);
        node->name = ExpectName("an attribute name");
        Attach(node.get(), std::move(value));
        value = std::move(node);
      } else if (token.kind == TK::kOperator && token.text == "[") {
        Next();
        value = ParseSubscript(token, std::move(value));
      } else if (token.kind == TK::kOperator && token.text == "(") {
        Next();
        auto node = MakeExpr(Expr::Kind::kCall, token);
        Attach(node.get(), std::move(value));
        ParseCallArgs(node.get());
        value = std::move(node);
      } else if (token.kind == TK::kOperator && token.text == "|") {
        Next();
        auto node = MakeExpr(Expr::Kind::kFilter, token);
        node->name = ExpectName("a filter name");
        Attach(node.get(), std::move(value));
        if (Accept("(")) ParseCallArgs(node.get());
        value = std::move(node);
      } else if (token.kind == TK::kName && token.text == "is") {
        Next();
        auto node = MakeExpr(Expr::Kind::kTest, token);
        node->negated = AcceptName("not");
        node->name = ExpectName("a test name");
        Attach(node.get(), std::move(value));
        if (Accept("(")) ParseCallArgs(node.get());
        value = std::move(node);
      } else {
        return value;
      }
    }
  }

  ExprPtr ParseSubscript(const Token& open, ExprPtr target) {
    std::vector<ExprPtr> parts(1);
    bool is_slice = false;
    while (true) {
      if (Peek().kind == TK::kOperator && (Peek().text == ":" || Peek().text == "]")) {
        if (Accept(":")) {
          is_slice = true;
          parts.emplace_back();
          continue;
        }
        Next();
        break;
      }
      parts.back() = ParseExpression();
    }
    if (!is_slice && !parts[0]) Fail("expected an index inside '[]'", open);
    auto node = MakeExpr(is_slice ? Expr::Kind::kSlice : Expr::Kind::kIndex, open);
    Attach(node.get(), std::move(target));
    for (auto& part : parts) Attach(node.get(), std::move(part));
    if (is_slice) node->args.resize(4);
    return node;
  }

  // After "(": positional args and name=value kwargs up to ")".
  void ParseCallArgs(Expr* node) {
    while (!Accept(")")) {
      if (node->args.size() + node->kwargs.size() > 1) ExpectOperator(",");
      if (Accept(")")) break;
      if (Peek().kind == TK::kName && tokens_[pos_ + 1].kind == TK::kOperator &&
          tokens_[pos_ + 1].text == "=") {
        std::string name = Next().text;
        Next();
        AttachKwarg(node, name, ParseExpression());
      } else {
        Attach(node, ParseExpression());
      }
    }
  }

  // Nesting limits: the parser recurses once per nested expression or statement, and Eval and
  // the tree's destructor once per level of the tree, so a template nested 100,000 levels deep
  // must be refused here rather than overflow a stack.
  static constexpr int32_t kMaxNesting = 256;
  struct NestingGuard {
    NestingGuard(Parser* parser, const Token& at) : parser_(parser) {
      if (++parser_->nesting_ > kMaxNesting) {
        Fail("expressions or statements nest deeper than " + std::to_string(kMaxNesting) +
                 " levels, the limit",
             at);
      }
    }
    ~NestingGuard() { --parser_->nesting_; }
    Parser* parser_;
  };
  // Adds `child` (may be null: an omitted slice part) as parent's next argument.
  void Attach(Expr* parent, ExprPtr child) {
    if (child) Grow(parent, *child);
    parent->args.push_back(std::move(child));
  }
  void AttachKwarg(Expr* parent, const std::string& name, ExprPtr child) {
    Grow(parent, *child);
    parent->kwargs.emplace_back(name, std::move(child));
  }
  static void Grow(Expr* parent, const Expr& child) {
    parent->height = std::max(parent->height, child.height + 1);
    if (parent->height > kMaxNesting) {
      Fail("an expression nests deeper than " + std::to_string(kMaxNesting) +
               " levels (e.g. a chain of operators, filters or attributes), the limit",
           child.line, child.column);
    }
  }

  // --- token helpers ---
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() {
    const Token& token = tokens_[pos_];
    if (token.kind != TK::kEnd) ++pos_;
    return token;
  }
  bool Accept(const std::string& op) {
    if (Peek().kind == TK::kOperator && Peek().text == op) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AcceptName(const std::string& name) {
    if (Peek().kind == TK::kName && Peek().text == name) {
      ++pos_;
      return true;
    }
    return false;
  }
  void ExpectOperator(const std::string& op) {
    if (!Accept(op)) Fail("expected '" + op + "', found " + Describe(Peek()), Peek());
  }
  void Expect(TK kind, const std::string& what) {
    if (Peek().kind != kind) Fail("expected " + what + ", found " + Describe(Peek()), Peek());
    ++pos_;
  }
  std::string ExpectName(const std::string& what) {
    if (Peek().kind != TK::kName) Fail("expected " + what + ", found " + Describe(Peek()), Peek());
    return Next().text;
  }
  static std::string Describe(const Token& token) {
    switch (token.kind) {
      case TK::kEnd:
        return "end of template";
      case TK::kText:
        return "template text";
      case TK::kVarBegin:
        return "'{{'";
      case TK::kVarEnd:
        return "'}}'";
      case TK::kBlockBegin:
        return "'{%'";
      case TK::kBlockEnd:
        return "'%}'";
      case TK::kString:
        return "string '" + token.text + "'";
      default:
        return "'" + token.text + "'";
    }
  }
  ExprPtr Literal(const Token& token, Json value) {
    auto node = MakeExpr(Expr::Kind::kLiteral, token);
    node->literal = std::move(value);
    return node;
  }
  static ExprPtr MakeExpr(Expr::Kind kind, const Token& token) {
    auto node = std::make_unique<Expr>();
    node->kind = kind;
    node->line = token.line;
    node->column = token.column;
    return node;
  }
  static NodePtr MakeNode(Node::Kind kind, const Token& token) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->line = token.line;
    node->column = token.column;
    return node;
  }
  [[noreturn]] static void Fail(const std::string& message, const Token& token) {
    throw TemplateError(message, token.line, token.column);
  }
  [[noreturn]] static void Fail(const std::string& message, int line, int column) {
    throw TemplateError(message, line, column);
  }

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int32_t nesting_ = 0;
};

}  // namespace

Body Parse(const std::vector<Token>& tokens) { return Parser(tokens).ParseTemplate(); }

}  // namespace tandem::text::jinja
