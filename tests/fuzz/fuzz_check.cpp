#include "fuzz_check.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "promql/go_strings.h"

namespace metrics_adapter::fuzz {
namespace {

// Reads `digits` hex digits at text[i...]; -1 when they are not all there.
long readHex(std::string_view text, std::size_t i, int digits) {
  if (i + static_cast<std::size_t>(digits) > text.size()) return -1;
  const char* begin = text.data() + i;
  const char* end = begin + digits;
  long value = 0;
  const auto [stop, error] = std::from_chars(begin, end, value, 16);
  return error == std::errc() && stop == end && *begin != '-' ? value : -1;
}

bool isLabelKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '/';
}

}  // namespace

void check(bool condition, std::string_view what, std::string_view detail) {
  if (condition) return;
  std::fprintf(stderr, "invariant failed: %.*s\n  detail: %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  std::abort();
}

std::optional<std::string> goUnquote(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') return std::nullopt;
  const std::string_view body = literal.substr(1, literal.size() - 2);
  std::string out;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '"' || c == '\n') return std::nullopt;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= body.size()) return std::nullopt;
    switch (body[i]) {
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
        out += '\\';
        break;
      case '"':
        out += '"';
        break;
      case 'x': {
        const long byte = readHex(body, i + 1, 2);
        if (byte < 0) return std::nullopt;
        out += static_cast<char>(byte);
        i += 2;
        break;
      }
      case 'u':
      case 'U': {
        const int digits = body[i] == 'u' ? 4 : 8;
        const long rune = readHex(body, i + 1, digits);
        if (rune < 0 || rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) return std::nullopt;
        promql::go::appendRune(out, static_cast<char32_t>(rune));
        i += static_cast<std::size_t>(digits);
        break;
      }
      default: {
        if (body[i] < '0' || body[i] > '7' || i + 2 >= body.size()) return std::nullopt;
        int value = 0;
        for (int k = 0; k < 3; ++k) {
          const char digit = body[i + static_cast<std::size_t>(k)];
          if (digit < '0' || digit > '7') return std::nullopt;
          value = value * 8 + (digit - '0');
        }
        if (value > 255) return std::nullopt;
        out += static_cast<char>(value);
        i += 2;
      }
    }
  }
  return out;
}

bool isPromqlMatcher(std::string_view matcher, std::string_view value) {
  std::size_t i = 0;
  while (i < matcher.size() && isLabelKeyChar(matcher[i])) ++i;
  if (i == 0 || i + 2 > matcher.size()) return false;
  const std::string_view op = matcher.substr(i, 2);
  std::size_t literal_begin = i + 1;
  if (op == "!=" || op == "=~" || op == "!~") {
    literal_begin = i + 2;
  } else if (matcher[i] != '=') {
    return false;
  }
  const auto decoded = goUnquote(matcher.substr(literal_begin));
  return decoded && *decoded == value;
}

std::optional<DecimalQuantity> parseDecimalQuantity(std::string_view text) {
  DecimalQuantity quantity;
  if (!text.empty() && text.front() == '-') {
    quantity.negative = true;
    text.remove_prefix(1);
  }
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || (digits > 1 && text.front() == '0')) return std::nullopt;
  quantity.mantissa = std::string(text.substr(0, digits));
  const std::string_view suffix = text.substr(digits);
  static constexpr std::string_view kSuffixes[] = {"m", "", "k", "M", "G", "T", "P", "E"};
  for (int k = 0; k < 8; ++k) {
    if (suffix == kSuffixes[k]) {
      quantity.exponent = 3 * (k - 1);
      return quantity;
    }
  }
  return std::nullopt;
}

}  // namespace metrics_adapter::fuzz
