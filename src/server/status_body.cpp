#include <cstdint>
#include <string>
#include <string_view>

#include "metrics_adapter/server/status.h"

namespace metrics_adapter::server {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void appendUnicodeEscape(std::string& out, std::uint32_t code_point) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out += kHexDigits[(code_point >> shift) & 0xF];
  }
}

bool isContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are not
// valid UTF-8 (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t validSequenceLength(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = at(0);
  const std::size_t left = text.size() - i;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    return left >= 2 && isContinuation(at(1)) ? 2 : 0;
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (left < 3 || !isContinuation(at(1)) || !isContinuation(at(2))) return 0;
    if (lead == 0xE0 && at(1) < 0xA0) return 0;
    if (lead == 0xED && at(1) > 0x9F) return 0;
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (left < 4 || !isContinuation(at(1)) || !isContinuation(at(2)) || !isContinuation(at(3))) {
      return 0;
    }
    if (lead == 0xF0 && at(1) < 0x90) return 0;
    if (lead == 0xF4 && at(1) > 0x8F) return 0;
    return 4;
  }
  return 0;
}

}  // namespace

std::string jsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      const std::size_t length = validSequenceLength(text, i);
      if (length == 0) {
        out += "\\ufffd";
        ++i;
        continue;
      }
      const std::string_view sequence = text.substr(i, length);
      if (sequence == "\xE2\x80\xA8" || sequence == "\xE2\x80\xA9") {
        appendUnicodeEscape(out, sequence.back() == '\xA8' ? 0x2028 : 0x2029);
      } else {
        out += sequence;
      }
      i += length;
      continue;
    }
    switch (byte) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '<':
      case '>':
      case '&':
        appendUnicodeEscape(out, byte);
        break;
      default:
        if (byte < 0x20) {
          appendUnicodeEscape(out, byte);
        } else {
          out += static_cast<char>(byte);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string statusJson(int code, std::string_view reason, std::string_view message) {
  std::string out =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  out += jsonQuote(message);
  out += R"(,"reason":)";
  out += jsonQuote(reason);
  out += R"(,"code":)";
  out += std::to_string(code);
  out += '}';
  return out;
}

}  // namespace metrics_adapter::server
