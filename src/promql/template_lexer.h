#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::promql::tmpl {

enum class TokenKind {
  kText,
  kLeftDelim,
  kRightDelim,
  kLeftParen,
  kRightParen,
  kPipe,
  kComma,
  kDeclare,  // :=
  kAssign,   // =
  kDot,
  kField,     // value: the name without the dot
  kVariable,  // value: the name with the dollar ("$", "$x")
  kIdentifier,
  kBool,
  kNumber,  // number: the value
  kString,  // value: decoded contents of "..." or `...`
  kChar,    // any other printable ASCII character inside an action
  kEof,
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::size_t pos = 0;  // byte offset of the first character
  std::size_t end = 0;  // byte offset after the last character
  std::string value;
  std::int64_t number = 0;
  bool space_before = false;  // whitespace separates this token from the previous one
};

// Splits a `<<` `>>` template into tokens, as Go's text/template lexer does: trim markers
// (`<<- `, ` ->>`) are applied to the neighbouring text, comments are dropped, string
// literals are decoded and integers parsed. The result ends with kEof. Throws TemplateError
// (with line and column) on lexical errors such as an unclosed action.
std::vector<Token> lexTemplate(std::string_view source);

}  // namespace metrics_adapter::promql::tmpl
