#include "promql/template_lexer.h"

#include <cstdint>
#include <cstdio>
#include <utility>

#include "promql/go_strings.h"
#include "promql/template_ast.h"

namespace metrics_adapter::promql::tmpl {
namespace {

constexpr std::string_view kLeftDelim = "<<";
constexpr std::string_view kRightDelim = ">>";

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Letters, digits and '_'; any non-ASCII byte counts as a letter (Go accepts Unicode letters).
bool isAlphaNumeric(char c) {
  const auto u = static_cast<unsigned char>(c);
  return c == '_' || isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || u >= 0x80;
}

int digitValue(char c) {
  if (isDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

std::string_view trimRight(std::string_view text) {
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  std::vector<Token> run() {
    std::size_t pos = 0;
    for (;;) {
      const std::size_t delim = src_.find(kLeftDelim, pos);
      if (delim == std::string_view::npos) {
        emitText(pos, src_.substr(pos));
        break;
      }
      const bool trim = hasLeftTrimMarker(delim + kLeftDelim.size());
      std::string_view text = src_.substr(pos, delim - pos);
      emitText(pos, trim ? trimRight(text) : text);
      pos = lexAction(delim, trim);
    }
    tokens_.push_back(Token{TokenKind::kEof, src_.size(), src_.size(), "", 0, false});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(std::size_t pos, const std::string& message) const {
    throwAt(src_, pos, message);
  }

  char at(std::size_t pos) const { return pos < src_.size() ? src_[pos] : '\0'; }

  bool hasLeftTrimMarker(std::size_t pos) const {
    return pos + 1 < src_.size() && src_[pos] == '-' && isSpace(src_[pos + 1]);
  }

  // Whether a right delimiter starts at `pos`; `*trim` tells whether it is " ->>".
  bool atRightDelim(std::size_t pos, bool* trim) const {
    if (pos + 1 < src_.size() && isSpace(src_[pos]) && src_[pos + 1] == '-' &&
        src_.substr(pos + 2).starts_with(kRightDelim)) {
      *trim = true;
      return true;
    }
    *trim = false;
    return src_.substr(pos).starts_with(kRightDelim);
  }

  std::size_t skipSpace(std::size_t pos) const {
    while (pos < src_.size() && isSpace(src_[pos])) ++pos;
    return pos;
  }

  std::string describeChar(std::size_t pos) const {
    char32_t rune = 0;
    go::decodeRune(src_, pos, &rune);
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(rune));
    std::string out = code;
    if (rune >= 0x20 && rune < 0x7F) out += std::string(" '") + static_cast<char>(rune) + "'";
    return out;
  }

  void emitText(std::size_t pos, std::string_view text) {
    if (!text.empty()) {
      tokens_.push_back(
          Token{TokenKind::kText, pos, pos + text.size(), std::string(text), 0, false});
    }
  }

  void emit(TokenKind kind, std::size_t pos, std::size_t end, std::string value = {},
            std::int64_t number = 0) {
    tokens_.push_back(Token{kind, pos, end, std::move(value), number, space_before_});
    space_before_ = false;
  }

  // Lexes the action (or comment) whose left delimiter is at `start`; returns the position
  // after its right delimiter and any whitespace a trim marker removes.
  std::size_t lexAction(std::size_t start, bool left_trim) {
    std::size_t pos = start + kLeftDelim.size() + (left_trim ? 2 : 0);
    if (src_.substr(pos).starts_with("/*")) return lexComment(start, pos);
    emit(TokenKind::kLeftDelim, start, pos);
    int paren_depth = 0;
    for (;;) {
      bool trim = false;
      if (atRightDelim(pos, &trim)) {
        if (paren_depth > 0) fail(pos, "unclosed left paren");
        const std::size_t delim = pos + (trim ? 2 : 0);
        emit(TokenKind::kRightDelim, delim, delim + kRightDelim.size());
        pos = delim + kRightDelim.size();
        return trim ? skipSpace(pos) : pos;
      }
      if (pos >= src_.size()) fail(start, "unclosed action");
      const char c = src_[pos];
      if (isSpace(c)) {
        space_before_ = true;
        ++pos;
        continue;
      }
      switch (c) {
        case '=':
          emit(TokenKind::kAssign, pos, pos + 1);
          ++pos;
          break;
        case ':':
          if (at(pos + 1) != '=') fail(pos, "expected :=");
          emit(TokenKind::kDeclare, pos, pos + 2);
          pos += 2;
          break;
        case '|':
          emit(TokenKind::kPipe, pos, pos + 1);
          ++pos;
          break;
        case ',':
          emit(TokenKind::kComma, pos, pos + 1);
          ++pos;
          break;
        case '(':
          emit(TokenKind::kLeftParen, pos, pos + 1);
          ++paren_depth;
          ++pos;
          break;
        case ')':
          if (--paren_depth < 0) fail(pos, "unexpected right paren");
          emit(TokenKind::kRightParen, pos, pos + 1);
          ++pos;
          break;
        case '"':
          pos = lexQuote(pos);
          break;
        case '`':
          pos = lexRawQuote(pos);
          break;
        case '$':
          pos = lexFieldOrVariable(pos, TokenKind::kVariable);
          break;
        case '\'':
          fail(pos, "character constants are not supported");
        case '.':
          if (!isDigit(at(pos + 1))) {
            pos = lexFieldOrVariable(pos, TokenKind::kField);
          } else {
            pos = lexNumber(pos);
          }
          break;
        default:
          if (c == '+' || c == '-' || isDigit(c)) {
            pos = lexNumber(pos);
          } else if (isAlphaNumeric(c)) {
            pos = lexIdentifier(pos);
          } else if (c > ' ' && c < 0x7F) {
            emit(TokenKind::kChar, pos, pos + 1, std::string(1, c));
            ++pos;
          } else {
            fail(pos, "unrecognized character in action: " + describeChar(pos));
          }
      }
    }
  }

  std::size_t lexComment(std::size_t start, std::size_t pos) {
    const std::size_t close = src_.find("*/", pos + 2);
    if (close == std::string_view::npos) fail(start, "unclosed comment");
    pos = close + 2;
    bool trim = false;
    if (!atRightDelim(pos, &trim)) fail(pos, "comment ends before closing delimiter");
    pos += (trim ? 2 : 0) + kRightDelim.size();
    return trim ? skipSpace(pos) : pos;
  }

  // Go's atTerminator: what may follow a field, variable or identifier.
  void checkTerminator(std::size_t pos) const {
    if (pos >= src_.size()) return;
    const char c = src_[pos];
    if (isSpace(c) || c == '.' || c == ',' || c == '|' || c == ':' || c == ')' || c == '(') {
      return;
    }
    if (src_.substr(pos).starts_with(kRightDelim)) return;
    fail(pos, "bad character " + describeChar(pos));
  }

  std::size_t scanAlphaNumeric(std::size_t pos) const {
    while (pos < src_.size() && isAlphaNumeric(src_[pos])) ++pos;
    return pos;
  }

  std::size_t lexFieldOrVariable(std::size_t start, TokenKind kind) {
    const std::size_t end = scanAlphaNumeric(start + 1);
    checkTerminator(end);
    if (kind == TokenKind::kVariable) {
      emit(kind, start, end, std::string(src_.substr(start, end - start)));
    } else if (end == start + 1) {
      emit(TokenKind::kDot, start, end);
    } else {
      emit(kind, start, end, std::string(src_.substr(start + 1, end - start - 1)));
    }
    return end;
  }

  std::size_t lexIdentifier(std::size_t start) {
    const std::size_t end = scanAlphaNumeric(start);
    checkTerminator(end);
    std::string word(src_.substr(start, end - start));
    const TokenKind kind =
        word == "true" || word == "false" ? TokenKind::kBool : TokenKind::kIdentifier;
    emit(kind, start, end, std::move(word));
    return end;
  }

  // Integers as Go's strconv.ParseInt(text, 0, 64) reads them: decimal, 0x, 0o, 0b, a leading
  // 0 for octal, '_' between digits. Floating-point and complex constants are rejected.
  std::size_t lexNumber(std::size_t start) {
    std::size_t pos = start;
    bool negative = false;
    if (src_[pos] == '+' || src_[pos] == '-') negative = src_[pos++] == '-';
    std::size_t end = pos;
    while (end < src_.size() && (isAlphaNumeric(src_[end]) || src_[end] == '.')) {
      const char c = src_[end++];
      if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (at(end) == '+' || at(end) == '-')) {
        ++end;
      }
    }
    const std::string_view text = src_.substr(start, end - start);
    const std::string_view body = src_.substr(pos, end - pos);
    const auto bad = [&]() { fail(start, "bad number syntax: \"" + std::string(text) + "\""); };
    const bool starts_like_number =
        !body.empty() && (isDigit(body[0]) || (body[0] == '.' && isDigit(at(pos + 1))));
    if (!starts_like_number) bad();

    int base = 10;
    std::size_t digits_at = 0;
    if (body.size() > 1 && body[0] == '0') {
      const char prefix = body[1];
      if (prefix == 'x' || prefix == 'X') {
        base = 16;
        digits_at = 2;
      } else if (prefix == 'o' || prefix == 'O') {
        base = 8;
        digits_at = 2;
      } else if (prefix == 'b' || prefix == 'B') {
        base = 2;
        digits_at = 2;
      } else {
        base = 8;
        digits_at = 1;
      }
    }
    const std::string_view digits = body.substr(digits_at);
    const bool is_float = body.find('.') != std::string_view::npos ||
                          (base == 16 && digits.find_first_of("pP") != std::string_view::npos) ||
                          (base != 16 && body.find_first_of("eE") != std::string_view::npos);
    if (is_float) fail(start, "floating-point constants are not supported: " + std::string(text));
    if (body.back() == 'i')
      fail(start, "complex constants are not supported: " + std::string(text));

    unsigned long long value = 0;
    const unsigned long long limit = negative ? 9223372036854775808ULL : 9223372036854775807ULL;
    bool any_digit = false;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      const char c = digits[i];
      if (c == '_') {
        const bool between = (i > 0 || digits_at == 2) && i + 1 < digits.size() &&
                             digits[i + 1] != '_' && (i == 0 || digits[i - 1] != '_');
        if (!between) bad();
        continue;
      }
      const int d = digitValue(c);
      if (d >= base) bad();
      any_digit = true;
      if (value > (limit - static_cast<unsigned>(d)) / static_cast<unsigned>(base)) {
        fail(start, "integer constant out of range: " + std::string(text));
      }
      value = value * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    }
    if (!any_digit && digits_at != 1) bad();
    std::int64_t number = 0;
    if (negative) {
      number = value == 9223372036854775808ULL ? INT64_MIN : -static_cast<std::int64_t>(value);
    } else {
      number = static_cast<std::int64_t>(value);
    }
    emit(TokenKind::kNumber, start, end, std::string(text), number);
    return end;
  }

  // Decodes a Go interpreted string literal (escapes as in the Go spec).
  std::size_t lexQuote(std::size_t start) {
    std::string out;
    std::size_t pos = start + 1;
    const auto unterminated = [&]() { fail(start, "unterminated quoted string"); };
    const auto hex = [&](std::size_t from, int count) -> std::uint32_t {
      std::uint32_t value = 0;
      for (int i = 0; i < count; ++i) {
        const int d = digitValue(at(from + static_cast<std::size_t>(i)));
        if (d >= 16) fail(from - 2, "invalid escape sequence in quoted string");
        value = value * 16 + static_cast<std::uint32_t>(d);
      }
      return value;
    };
    for (;;) {
      if (pos >= src_.size() || src_[pos] == '\n') unterminated();
      const char c = src_[pos];
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      const char e = at(pos + 1);
      if (pos + 1 >= src_.size() || e == '\n') unterminated();
      switch (e) {
        case 'a':
          out += '\a';
          pos += 2;
          break;
        case 'b':
          out += '\b';
          pos += 2;
          break;
        case 'f':
          out += '\f';
          pos += 2;
          break;
        case 'n':
          out += '\n';
          pos += 2;
          break;
        case 'r':
          out += '\r';
          pos += 2;
          break;
        case 't':
          out += '\t';
          pos += 2;
          break;
        case 'v':
          out += '\v';
          pos += 2;
          break;
        case '\\':
          out += '\\';
          pos += 2;
          break;
        case '"':
          out += '"';
          pos += 2;
          break;
        case 'x':
          out += static_cast<char>(hex(pos + 2, 2));
          pos += 4;
          break;
        case 'u':
        case 'U': {
          const int count = e == 'u' ? 4 : 8;
          const std::uint32_t rune = hex(pos + 2, count);
          if (rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) {
            fail(pos, "invalid escape sequence in quoted string");
          }
          go::appendRune(out, rune);
          pos += 2 + static_cast<std::size_t>(count);
          break;
        }
        default: {
          if (e < '0' || e > '7') fail(pos, "invalid escape sequence in quoted string");
          std::uint32_t value = 0;
          for (std::size_t i = 1; i <= 3; ++i) {
            const char d = at(pos + i);
            if (d < '0' || d > '7') fail(pos, "invalid escape sequence in quoted string");
            value = value * 8 + static_cast<std::uint32_t>(d - '0');
          }
          if (value > 255) fail(pos, "invalid escape sequence in quoted string");
          out += static_cast<char>(value);
          pos += 4;
        }
      }
    }
    emit(TokenKind::kString, start, pos + 1, std::move(out));
    return pos + 1;
  }

  std::size_t lexRawQuote(std::size_t start) {
    const std::size_t close = src_.find('`', start + 1);
    if (close == std::string_view::npos) fail(start, "unterminated raw quoted string");
    std::string out;
    for (const char c : src_.substr(start + 1, close - start - 1)) {
      if (c != '\r') out += c;  // Go drops carriage returns from raw strings
    }
    emit(TokenKind::kString, start, close + 1, std::move(out));
    return close + 1;
  }

  std::string_view src_;
  std::vector<Token> tokens_;
  bool space_before_ = false;
};

}  // namespace

std::vector<Token> lexTemplate(std::string_view source) { return Lexer(source).run(); }

}  // namespace metrics_adapter::promql::tmpl
