#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::promql::selector {

enum class TokenKind {
  kEndOfString,
  kClosedPar,
  kComma,
  kDoesNotExist,  // !
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Token {
  TokenKind kind = TokenKind::kEndOfString;
  std::string_view literal;  // points into the lexed text; empty for kEndOfString
  std::size_t offset = 0;    // byte offset of the token's first character
};

// Splits `text` as apimachinery's labels.Lexer does: space, tab, CR and LF separate tokens;
// `= ! ( ) , > <` end an identifier; `==` and `!=` are single tokens; the words `in` and
// `notin` are keywords. Unlike Go, a NUL byte is an ordinary character (Go treats it as the
// end of the input and silently ignores the rest). The result always ends with kEndOfString.
std::vector<Token> lexSelector(std::string_view text);

// The token for an error message: "end of string", or the literal in single quotes with
// bytes outside printable ASCII as \xNN and long literals shortened. Always ASCII.
std::string describeToken(const Token& token);

}  // namespace metrics_adapter::promql::selector
