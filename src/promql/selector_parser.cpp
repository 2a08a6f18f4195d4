#include "promql/selector_parser.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "promql/label_validation.h"
#include "promql/selector_lexer.h"

namespace metrics_adapter::promql::selector {
namespace {

struct PositionedValue {
  std::string text;
  std::size_t offset = 0;
};

[[noreturn]] void fail(const std::string& message, std::size_t offset) {
  throw SelectorError(message + " (column " + std::to_string(offset + 1) + ")");
}

[[noreturn]] void failRequirement(const std::string& message, std::size_t offset) {
  fail("unable to parse requirement: " + message, offset);
}

// In value position `in` and `notin` are plain words (`x in (in)`), as in Go's Values context.
TokenKind asValue(TokenKind kind) {
  return kind == TokenKind::kIn || kind == TokenKind::kNotIn ? TokenKind::kIdentifier : kind;
}

std::string describeText(std::string_view text) {
  return describeToken({TokenKind::kIdentifier, text, 0});
}

// A parser with the structure, lookahead and error precedence of apimachinery's labels.Parser.
class Parser {
 public:
  explicit Parser(std::string_view text) : tokens_(lexSelector(text)) {}

  std::vector<Requirement> parse() {
    std::vector<Requirement> requirements;
    while (true) {
      const Token& token = peek();
      const TokenKind kind = asValue(token.kind);
      if (kind == TokenKind::kEndOfString) return requirements;
      if (kind != TokenKind::kIdentifier && kind != TokenKind::kDoesNotExist) {
        fail("found " + describeToken(token) + ", expected: !, identifier, or 'end of string'",
             token.offset);
      }
      requirements.push_back(parseRequirement());
      const Token& separator = consume();
      if (separator.kind == TokenKind::kEndOfString) return requirements;
      if (separator.kind != TokenKind::kComma) {
        fail("found " + describeToken(separator) + ", expected: ',' or 'end of string'",
             separator.offset);
      }
      const TokenKind after_comma = asValue(peek().kind);
      if (after_comma != TokenKind::kIdentifier && after_comma != TokenKind::kDoesNotExist) {
        fail("found " + describeToken(peek()) + ", expected: identifier after ','", peek().offset);
      }
    }
  }

 private:
  [[nodiscard]] const Token& peek() const { return tokens_[position_]; }

  // Never moves past the final kEndOfString token.
  const Token& consume() {
    const Token& token = tokens_[position_];
    if (position_ + 1 < tokens_.size()) ++position_;
    return token;
  }

  Requirement parseRequirement() {
    Requirement requirement;
    Token key_token = consume();
    const bool does_not_exist = key_token.kind == TokenKind::kDoesNotExist;
    if (does_not_exist) key_token = consume();
    if (asValue(key_token.kind) != TokenKind::kIdentifier) {
      failRequirement("found " + describeToken(key_token) + ", expected: identifier",
                      key_token.offset);
    }
    if (const auto problem = checkLabelKey(key_token.literal)) {
      failRequirement("invalid label key " + describeText(key_token.literal) + ": " + *problem,
                      key_token.offset);
    }
    requirement.key = std::string(key_token.literal);
    if (does_not_exist) {
      requirement.op = SelectorOperator::kDoesNotExist;
      return requirement;
    }
    const TokenKind lookahead = asValue(peek().kind);
    if (lookahead == TokenKind::kEndOfString || lookahead == TokenKind::kComma) {
      requirement.op = SelectorOperator::kExists;
      return requirement;
    }
    const Token& op_token = consume();
    std::vector<PositionedValue> values;
    switch (op_token.kind) {
      case TokenKind::kIn:
        requirement.op = SelectorOperator::kIn;
        values = parseValueSet();
        break;
      case TokenKind::kNotIn:
        requirement.op = SelectorOperator::kNotIn;
        values = parseValueSet();
        break;
      case TokenKind::kEquals:
        requirement.op = SelectorOperator::kEquals;
        values.push_back(parseExactValue());
        break;
      case TokenKind::kDoubleEquals:
        requirement.op = SelectorOperator::kDoubleEquals;
        values.push_back(parseExactValue());
        break;
      case TokenKind::kNotEquals:
        requirement.op = SelectorOperator::kNotEquals;
        values.push_back(parseExactValue());
        break;
      case TokenKind::kGreaterThan:
        requirement.op = SelectorOperator::kGreaterThan;
        values.push_back(parseExactValue());
        break;
      case TokenKind::kLessThan:
        requirement.op = SelectorOperator::kLessThan;
        values.push_back(parseExactValue());
        break;
      default:
        failRequirement(
            "found " + describeToken(op_token) + ", expected: in, notin, =, ==, !=, >, <",
            op_token.offset);
    }
    requirement.values = validateValues(requirement, std::move(values));
    return requirement;
  }

  // "(" [value] ("," [value])* ")"; an omitted value is the empty string, so `()` is {""}.
  std::vector<PositionedValue> parseValueSet() {
    const Token& open = consume();
    if (asValue(open.kind) != TokenKind::kOpenPar) {
      failRequirement("found " + describeToken(open) + ", expected: '('", open.offset);
    }
    const Token& first = peek();
    switch (asValue(first.kind)) {
      case TokenKind::kClosedPar:
        consume();
        return {{"", first.offset}};
      case TokenKind::kIdentifier:
      case TokenKind::kComma: {
        std::vector<PositionedValue> values = parseValueList();
        const Token& close = consume();
        if (close.kind != TokenKind::kClosedPar) {
          failRequirement("found " + describeToken(close) + ", expected: ')'", close.offset);
        }
        return values;
      }
      default:
        failRequirement("found " + describeToken(first) + ", expected: ',', ')' or identifier",
                        first.offset);
    }
  }

  // Returns with the closing parenthesis as the next token.
  std::vector<PositionedValue> parseValueList() {
    std::vector<PositionedValue> values;
    while (true) {
      const Token& token = consume();
      switch (asValue(token.kind)) {
        case TokenKind::kIdentifier: {
          values.push_back({std::string(token.literal), token.offset});
          const Token& next = peek();
          const TokenKind next_kind = asValue(next.kind);
          if (next_kind == TokenKind::kClosedPar) return values;
          if (next_kind != TokenKind::kComma) {
            failRequirement("found " + describeToken(next) + ", expected: ',' or ')'", next.offset);
          }
          break;
        }
        case TokenKind::kComma: {
          if (values.empty()) values.push_back({"", token.offset});
          const TokenKind next_kind = asValue(peek().kind);
          if (next_kind == TokenKind::kClosedPar) {
            values.push_back({"", token.offset});
            return values;
          }
          if (next_kind == TokenKind::kComma) {
            consume();
            values.push_back({"", token.offset});
          }
          break;
        }
        default:
          failRequirement("found " + describeToken(token) + ", expected: ',', or identifier",
                          token.offset);
      }
    }
  }

  // The single value after = == != > <; an omitted value (end or ',') is the empty string.
  PositionedValue parseExactValue() {
    const Token& next = peek();
    const TokenKind next_kind = asValue(next.kind);
    if (next_kind == TokenKind::kEndOfString || next_kind == TokenKind::kComma) {
      return {"", next.offset};
    }
    const Token& token = consume();
    if (next_kind != TokenKind::kIdentifier) {
      failRequirement("found " + describeToken(token) + ", expected: identifier", token.offset);
    }
    return {std::string(token.literal), token.offset};
  }

  // Sorts and de-duplicates (Go's sets.String.List()), then applies NewRequirement's checks in
  // its order: integer operands for > and <, then each value's syntax.
  static std::vector<std::string> validateValues(const Requirement& requirement,
                                                 std::vector<PositionedValue> values) {
    std::stable_sort(values.begin(), values.end(),
                     [](const auto& a, const auto& b) { return a.text < b.text; });
    values.erase(std::unique(values.begin(), values.end(),
                             [](const auto& a, const auto& b) { return a.text == b.text; }),
                 values.end());
    const bool integer_operator = requirement.op == SelectorOperator::kGreaterThan ||
                                  requirement.op == SelectorOperator::kLessThan;
    if (integer_operator && !parseGoInt64(values.front().text)) {
      failRequirement("invalid value " + describeText(values.front().text) + " for key " +
                          describeText(requirement.key) +
                          ": for '>', '<' operators, the value must be an integer",
                      values.front().offset);
    }
    std::vector<std::string> texts;
    texts.reserve(values.size());
    for (PositionedValue& value : values) {
      if (const auto problem = checkLabelValue(value.text)) {
        failRequirement("invalid value " + describeText(value.text) + " for key " +
                            describeText(requirement.key) + ": " + *problem,
                        value.offset);
      }
      texts.push_back(std::move(value.text));
    }
    return texts;
  }

  std::vector<Token> tokens_;
  std::size_t position_ = 0;
};

}  // namespace

std::vector<Requirement> parseRequirements(std::string_view text) { return Parser(text).parse(); }

}  // namespace metrics_adapter::promql::selector
