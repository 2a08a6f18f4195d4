#include "promql/template_parser.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "promql/template_builtins.h"

namespace metrics_adapter::promql::tmpl {
namespace {

bool isKeyword(std::string_view word) {
  return word == "if" || word == "else" || word == "end" || word == "range" || word == "with" ||
         word == "break" || word == "continue" || word == "define" || word == "template" ||
         word == "block" || word == "nil";
}

bool isOperandStart(const Token& token) {
  switch (token.kind) {
    case TokenKind::kDot:
    case TokenKind::kField:
    case TokenKind::kVariable:
    case TokenKind::kIdentifier:
    case TokenKind::kBool:
    case TokenKind::kNumber:
    case TokenKind::kString:
    case TokenKind::kLeftParen:
      return true;
    default:
      return false;
  }
}

class Parser {
 public:
  Parser(std::string_view source, const std::vector<Token>& tokens,
         const std::set<std::string>& allowed_fields)
      : src_(source), tokens_(tokens), fields_(allowed_fields) {}

  NodeList run() {
    Stop stop;
    NodeList list = parseList(&stop);
    if (stop.kind != Stop::Kind::kEof) fail(stop.pos, "unexpected " + quote(stop.pos));
    return list;
  }

 private:
  // Why parseList returned: end of input, or an action that closes or splits a block.
  struct Stop {
    enum class Kind { kEof, kEnd, kElse, kElseIf, kElseWith };
    Kind kind = Kind::kEof;
    std::size_t pos = 0;        // the `else` or `end` keyword
    std::size_t inner_pos = 0;  // kElseIf, kElseWith: the `if` or `with` keyword
  };

  [[noreturn]] void fail(std::size_t pos, const std::string& message) const {
    throwAt(src_, pos, message);
  }

  const Token& peek() const { return tokens_[index_]; }

  const Token& next() {
    const Token& token = tokens_[index_];
    if (token.kind != TokenKind::kEof) ++index_;
    return token;
  }

  // The source text of the token or keyword at `pos`, quoted, for messages.
  std::string quote(std::size_t pos) const {
    for (const Token& token : tokens_) {
      if (token.pos == pos) return describe(token);
    }
    return "token";
  }

  std::string describe(const Token& token) const {
    if (token.kind == TokenKind::kEof) return "end of template";
    std::string_view text = src_.substr(token.pos, token.end - token.pos);
    if (token.kind == TokenKind::kIdentifier && isKeyword(text)) {
      return "<<" + std::string(text) + ">>";
    }
    // Messages stay one line: control characters (newlines in raw strings) are escaped.
    std::string shown = "\"";
    for (const char c : text.substr(0, 40)) {
      if (static_cast<unsigned char>(c) < 0x20) {
        constexpr char kHex[] = "0123456789abcdef";
        shown += "\\x";
        shown += kHex[(c >> 4) & 0xF];
        shown += kHex[c & 0xF];
      } else {
        shown += c;
      }
    }
    return shown + (text.size() > 40 ? "...\"" : "\"");
  }

  void enterNesting(std::size_t pos) {
    if (++depth_ > kMaxNestingDepth) {
      fail(pos, "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels");
    }
  }

  bool isDefined(std::string_view name) const {
    // The innermost definition shadows: search from the end.
    return std::find(vars_.rbegin(), vars_.rend(), name) != vars_.rend();
  }

  void checkField(const std::string& name, std::size_t pos) const {
    if (fields_.count(name) != 0) return;
    std::string known;
    for (const auto& field : fields_) known += (known.empty() ? "." : ", .") + field;
    fail(pos, "unknown field ." + name + (known.empty() ? "" : " (known fields: " + known + ")"));
  }

  NodeList parseList(Stop* stop) {
    NodeList list;
    for (;;) {
      const Token& token = next();
      if (token.kind == TokenKind::kEof) {
        *stop = Stop{Stop::Kind::kEof, token.pos, 0};
        return list;
      }
      if (token.kind == TokenKind::kText) {
        Node node;
        node.kind = Node::Kind::kText;
        node.pos = token.pos;
        node.text = token.value;
        list.push_back(std::move(node));
        continue;
      }
      if (token.kind != TokenKind::kLeftDelim) fail(token.pos, "unexpected " + describe(token));
      if (auto action_stop = parseAction(token.pos, &list)) {
        *stop = *action_stop;
        return list;
      }
    }
  }

  void expectRightDelim(std::string_view context) {
    const Token& token = next();
    if (token.kind != TokenKind::kRightDelim) {
      fail(token.pos, "unexpected " + describe(token) + " in <<" + std::string(context) + ">>");
    }
  }

  std::optional<Stop> parseAction(std::size_t delim_pos, NodeList* list) {
    const Token& first = peek();
    if (first.kind == TokenKind::kIdentifier) {
      const std::string& word = first.value;
      if (word == "if" || word == "range" || word == "with") {
        next();
        const Node::Kind kind = word == "if"      ? Node::Kind::kIf
                                : word == "range" ? Node::Kind::kRange
                                                  : Node::Kind::kWith;
        list->push_back(parseControl(kind, first.pos));
        return std::nullopt;
      }
      if (word == "else") {
        next();
        const Token& after = peek();
        if (after.kind == TokenKind::kIdentifier &&
            (after.value == "if" || after.value == "with")) {
          next();
          return Stop{after.value == "if" ? Stop::Kind::kElseIf : Stop::Kind::kElseWith, first.pos,
                      after.pos};
        }
        expectRightDelim("else");
        return Stop{Stop::Kind::kElse, first.pos, 0};
      }
      if (word == "end") {
        next();
        expectRightDelim("end");
        return Stop{Stop::Kind::kEnd, first.pos, 0};
      }
      if (word == "break" || word == "continue") {
        next();
        if (range_depth_ == 0) fail(first.pos, "<<" + word + ">> outside <<range>>");
        expectRightDelim(word);
        Node node;
        node.kind = word == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
        node.pos = first.pos;
        list->push_back(std::move(node));
        return std::nullopt;
      }
      if (word == "define" || word == "template" || word == "block") {
        fail(first.pos, "<<" + word + ">> is not supported");
      }
    }
    Node node;
    node.kind = Node::Kind::kAction;
    node.pos = delim_pos;
    node.pipeline = parsePipeline("command", TokenKind::kRightDelim, 1);
    list->push_back(std::move(node));
    return std::nullopt;
  }

  // Parses `if`/`range`/`with` after its keyword at `pos`, up to and including its `end`.
  Node parseControl(Node::Kind kind, std::size_t pos) {
    const std::string keyword = kind == Node::Kind::kIf      ? "if"
                                : kind == Node::Kind::kRange ? "range"
                                                             : "with";
    enterNesting(pos);
    const std::size_t var_mark = vars_.size();
    Node node;
    node.kind = kind;
    node.pos = pos;
    node.pipeline =
        parsePipeline(keyword, TokenKind::kRightDelim, kind == Node::Kind::kRange ? 2 : 1);
    if (kind == Node::Kind::kRange) ++range_depth_;
    Stop stop;
    node.body = parseList(&stop);
    if (kind == Node::Kind::kRange) --range_depth_;
    switch (stop.kind) {
      case Stop::Kind::kEof:
        fail(pos, "missing <<end>> for <<" + keyword + ">>");
      case Stop::Kind::kEnd:
        break;
      case Stop::Kind::kElseIf:
      case Stop::Kind::kElseWith: {
        const bool is_if = stop.kind == Stop::Kind::kElseIf;
        if (kind != (is_if ? Node::Kind::kIf : Node::Kind::kWith)) {
          fail(stop.inner_pos, std::string("<<else ") + (is_if ? "if" : "with") +
                                   ">> is not allowed in <<" + keyword + ">>");
        }
        // {{if a}}x{{else if b}}y{{end}} is {{if a}}x{{else}}{{if b}}y{{end}}{{end}}.
        node.else_body.push_back(
            parseControl(is_if ? Node::Kind::kIf : Node::Kind::kWith, stop.inner_pos));
        break;
      }
      case Stop::Kind::kElse: {
        Stop else_stop;
        node.else_body = parseList(&else_stop);
        if (else_stop.kind == Stop::Kind::kEof) {
          fail(pos, "missing <<end>> for <<" + keyword + ">>");
        }
        if (else_stop.kind != Stop::Kind::kEnd) {
          fail(else_stop.pos, "unexpected <<else>> after <<else>> in <<" + keyword + ">>");
        }
        break;
      }
    }
    vars_.resize(var_mark);
    --depth_;
    return node;
  }

  // Parses a pipeline up to and including `end_kind`. `max_decls` variables may be declared or
  // assigned at its start (2 for range, 0 in parentheses).
  Pipeline parsePipeline(const std::string& context, TokenKind end_kind, int max_decls) {
    Pipeline pipe;
    pipe.pos = peek().pos;
    parseDeclarations(&pipe, context, max_decls);

    bool after_pipe = false;
    for (;;) {
      const Token& token = peek();
      if (token.kind == end_kind) {
        if (pipe.commands.empty()) fail(token.pos, "missing value for " + context);
        if (after_pipe) fail(token.pos, "missing command after \"|\"");
        next();
        break;
      }
      if (!isOperandStart(token)) {
        fail(token.pos, "unexpected " + describe(token) + " in " + context);
      }
      pipe.commands.push_back(parseCommand());
      after_pipe = peek().kind == TokenKind::kPipe;
      if (after_pipe) next();
    }
    checkCommands(pipe);
    if (!pipe.is_assign) {
      for (const auto& name : pipe.decl) vars_.push_back(name);
    }
    return pipe;
  }

  void parseDeclarations(Pipeline* pipe, const std::string& context, int max_decls) {
    if (max_decls == 0 || peek().kind != TokenKind::kVariable) return;
    const std::size_t save = index_;
    const Token& var = next();
    const Token& after = peek();
    if (after.kind == TokenKind::kDeclare || after.kind == TokenKind::kAssign) {
      next();
      pipe->is_assign = after.kind == TokenKind::kAssign;
      pipe->decl.push_back(var.value);
    } else if (after.kind == TokenKind::kComma) {
      if (max_decls < 2) fail(after.pos, "too many declarations in " + context);
      next();
      const Token& second = next();
      if (second.kind != TokenKind::kVariable) {
        fail(second.pos, "range can only initialize variables");
      }
      const Token& op = next();
      if (op.kind != TokenKind::kDeclare && op.kind != TokenKind::kAssign) {
        fail(op.pos, "expected := or = after " + second.value + ", found " + describe(op));
      }
      pipe->is_assign = op.kind == TokenKind::kAssign;
      pipe->decl = {var.value, second.value};
    } else {
      index_ = save;
      return;
    }
    if (pipe->is_assign) {
      for (const auto& name : pipe->decl) {
        if (!isDefined(name)) fail(var.pos, "undefined variable \"" + name + "\"");
      }
    }
  }

  Command parseCommand() {
    Command cmd;
    cmd.pos = peek().pos;
    for (;;) {
      cmd.args.push_back(parseOperand());
      const Token& token = peek();
      if (token.kind == TokenKind::kPipe || token.kind == TokenKind::kRightDelim ||
          token.kind == TokenKind::kRightParen) {
        break;
      }
      if (!token.space_before || !isOperandStart(token)) {
        fail(token.pos, "unexpected " + describe(token) + " in operand");
      }
    }
    for (std::size_t i = 1; i < cmd.args.size(); ++i) {
      if (cmd.args[i].kind == Operand::Kind::kFunction) checkArity(cmd.args[i], 0);
    }
    return cmd;
  }

  std::string describeOperand(const Operand& op) const {
    switch (op.kind) {
      case Operand::Kind::kDot:
        return ".";
      case Operand::Kind::kField: {
        std::string text;
        for (const auto& field : op.fields) text += "." + field;
        return text;
      }
      case Operand::Kind::kVariable:
        return op.text;
      case Operand::Kind::kPipeline:
        return "parenthesized pipeline";
      case Operand::Kind::kString:
        return "string constant";
      case Operand::Kind::kInt:
        return "number " + std::to_string(op.number);
      case Operand::Kind::kBool:
        return op.number != 0 ? "true" : "false";
      case Operand::Kind::kFunction:
        return std::string(builtinInfo(op.function).name);
    }
    return "operand";
  }

  void checkArity(const Operand& fn, std::size_t argc) const {
    const BuiltinInfo& info = builtinInfo(fn.function);
    const auto count = static_cast<int>(argc);
    if (count >= info.min_args && (info.max_args < 0 || count <= info.max_args)) return;
    const std::string want =
        info.min_args == info.max_args
            ? std::to_string(info.min_args)
            : (count < info.min_args ? "at least " + std::to_string(info.min_args)
                                     : "at most " + std::to_string(info.max_args));
    fail(fn.pos, "wrong number of args for " + std::string(info.name) + ": want " + want + " got " +
                     std::to_string(count));
  }

  // Go checks these at execution; they are certain failures, so report them now.
  void checkCommands(const Pipeline& pipe) const {
    for (std::size_t stage = 0; stage < pipe.commands.size(); ++stage) {
      const Command& cmd = pipe.commands[stage];
      const Operand& first = cmd.args[0];
      const std::size_t piped = stage > 0 ? 1 : 0;
      if (first.kind == Operand::Kind::kFunction) {
        checkArity(first, cmd.args.size() - 1 + piped);
        continue;
      }
      if (piped != 0) {
        fail(first.pos, "can't pipe into " + describeOperand(first) + ": not a function");
      }
      if (cmd.args.size() > 1) {
        fail(cmd.args[1].pos, "can't give argument to non-function " + describeOperand(first));
      }
    }
  }

  void appendChain(Operand* op) {
    while (peek().kind == TokenKind::kField && !peek().space_before) {
      op->fields.push_back(next().value);
    }
  }

  void rejectChain(const Operand& op) const {
    if (peek().kind == TokenKind::kField && !peek().space_before) {
      fail(peek().pos, "unexpected . after " + describeOperand(op));
    }
  }

  Operand parseOperand() {
    const Token& token = next();
    Operand op;
    op.pos = token.pos;
    switch (token.kind) {
      case TokenKind::kIdentifier: {
        if (token.value == "nil") fail(token.pos, "nil is not supported");
        if (isKeyword(token.value))
          fail(token.pos, "unexpected " + describe(token) + " in operand");
        const BuiltinInfo* info = findBuiltin(token.value);
        if (info == nullptr) {
          fail(token.pos,
               "function \"" + token.value + "\"" +
                   (isUnsupportedGoBuiltin(token.value) ? " is not supported" : " not defined"));
        }
        op.kind = Operand::Kind::kFunction;
        op.function = info->id;
        rejectChain(op);
        return op;
      }
      case TokenKind::kDot:
        op.kind = Operand::Kind::kDot;
        rejectChain(op);
        return op;
      case TokenKind::kField:
        op.kind = Operand::Kind::kField;
        checkField(token.value, token.pos);
        op.fields.push_back(token.value);
        appendChain(&op);
        return op;
      case TokenKind::kVariable: {
        if (!isDefined(token.value)) fail(token.pos, "undefined variable \"" + token.value + "\"");
        op.kind = Operand::Kind::kVariable;
        op.text = token.value;
        const std::size_t chain_pos = peek().pos;
        appendChain(&op);
        if (op.text == "$" && !op.fields.empty()) checkField(op.fields[0], chain_pos);
        return op;
      }
      case TokenKind::kLeftParen: {
        enterNesting(token.pos);
        op.kind = Operand::Kind::kPipeline;
        op.pipeline = std::make_shared<const Pipeline>(
            parsePipeline("parenthesized pipeline", TokenKind::kRightParen, 0));
        --depth_;
        appendChain(&op);
        return op;
      }
      case TokenKind::kString:
        op.kind = Operand::Kind::kString;
        op.text = token.value;
        rejectChain(op);
        return op;
      case TokenKind::kNumber:
        op.kind = Operand::Kind::kInt;
        op.number = token.number;
        rejectChain(op);
        return op;
      case TokenKind::kBool:
        op.kind = Operand::Kind::kBool;
        op.number = token.value == "true" ? 1 : 0;
        rejectChain(op);
        return op;
      default:
        fail(token.pos, "unexpected " + describe(token) + " in operand");
    }
  }

  std::string_view src_;
  const std::vector<Token>& tokens_;
  const std::set<std::string>& fields_;
  std::size_t index_ = 0;
  std::vector<std::string> vars_{"$"};
  int depth_ = 0;
  int range_depth_ = 0;
};

}  // namespace

NodeList parseTokens(std::string_view source, const std::vector<Token>& tokens,
                     const std::set<std::string>& allowed_fields) {
  return Parser(source, tokens, allowed_fields).run();
}

}  // namespace metrics_adapter::promql::tmpl
