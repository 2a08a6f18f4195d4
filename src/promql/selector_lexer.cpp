#include "promql/selector_lexer.h"

namespace metrics_adapter::promql::selector {
namespace {

constexpr std::size_t kMaxDescribedBytes = 40;

bool isWhitespace(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; }

bool isSpecialSymbol(char ch) {
  switch (ch) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

// Every single special character is a token and the only longer ones are `==` and `!=`, so
// Go's longest-match loop reduces to this.
Token scanSpecialSymbol(std::string_view text, std::size_t pos) {
  const char ch = text[pos];
  const bool followed_by_equals = pos + 1 < text.size() && text[pos + 1] == '=';
  if (ch == '=' && followed_by_equals) return {TokenKind::kDoubleEquals, text.substr(pos, 2), pos};
  if (ch == '!' && followed_by_equals) return {TokenKind::kNotEquals, text.substr(pos, 2), pos};
  TokenKind kind = TokenKind::kEquals;
  switch (ch) {
    case '!':
      kind = TokenKind::kDoesNotExist;
      break;
    case '(':
      kind = TokenKind::kOpenPar;
      break;
    case ')':
      kind = TokenKind::kClosedPar;
      break;
    case ',':
      kind = TokenKind::kComma;
      break;
    case '>':
      kind = TokenKind::kGreaterThan;
      break;
    case '<':
      kind = TokenKind::kLessThan;
      break;
    default:
      break;
  }
  return {kind, text.substr(pos, 1), pos};
}

Token scanIdentifierOrKeyword(std::string_view text, std::size_t pos) {
  std::size_t end = pos;
  while (end < text.size() && !isSpecialSymbol(text[end]) && !isWhitespace(text[end])) ++end;
  const std::string_view word = text.substr(pos, end - pos);
  TokenKind kind = TokenKind::kIdentifier;
  if (word == "in") kind = TokenKind::kIn;
  if (word == "notin") kind = TokenKind::kNotIn;
  return {kind, word, pos};
}

}  // namespace

std::vector<Token> lexSelector(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t pos = 0;
  while (true) {
    while (pos < text.size() && isWhitespace(text[pos])) ++pos;
    if (pos == text.size()) break;
    const Token token = isSpecialSymbol(text[pos]) ? scanSpecialSymbol(text, pos)
                                                   : scanIdentifierOrKeyword(text, pos);
    tokens.push_back(token);
    pos += token.literal.size();
  }
  tokens.push_back({TokenKind::kEndOfString, {}, text.size()});
  return tokens;
}

std::string describeToken(const Token& token) {
  if (token.kind == TokenKind::kEndOfString) return "end of string";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  const std::string_view shown = token.literal.substr(0, kMaxDescribedBytes);
  for (const char ch : shown) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte >= 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += ch;
    }
  }
  if (shown.size() < token.literal.size()) out += "...";
  out += "'";
  return out;
}

}  // namespace metrics_adapter::promql::selector
