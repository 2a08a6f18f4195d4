#include "metrics_adapter/text/json_quote.h"

#include <cstddef>
#include <cstdint>

#include "metrics_adapter/text/utf8.h"

namespace metrics_adapter::text {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void appendUnicodeEscape(std::string& out, std::uint32_t code_point) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out += kHexDigits[(code_point >> shift) & 0xF];
  }
}

// Bytes copied as they are: printable ASCII that Go's encoder leaves alone.
bool isPlain(unsigned char byte) {
  return byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\' && byte != '<' && byte != '>' &&
         byte != '&';
}

}  // namespace

void appendJsonQuoted(std::string& out, std::string_view text) {
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    // A run of plain bytes goes in with one append: names and values are nearly all plain, and
    // a MetricValueList writes one per object (docs/performance.md, round 4).
    std::size_t plain_end = i;
    while (plain_end < text.size() && isPlain(static_cast<unsigned char>(text[plain_end]))) {
      ++plain_end;
    }
    out.append(text.data() + i, plain_end - i);
    i = plain_end;
    if (i == text.size()) break;
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      const std::size_t length = text::utf8SequenceLength(text, i);
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
      default:  // '<', '>', '&' and the other control characters
        appendUnicodeEscape(out, byte);
    }
    ++i;
  }
  out += '"';
}

std::string jsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  appendJsonQuoted(out, text);
  return out;
}

}  // namespace metrics_adapter::text
