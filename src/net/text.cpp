#include "metrics_adapter/net/text.h"

namespace metrics_adapter::net {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are invalid.
std::size_t utf8SequenceLength(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned char min_second = 0x80;
  unsigned char max_second = 0xBF;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;  // overlong
    if (lead == 0xED) max_second = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;  // overlong
    if (lead == 0xF4) max_second = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string sanitizeLine(std::string_view text, std::size_t max_bytes) {
  std::string out;
  bool cut = false;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = utf8SequenceLength(text, i);
    std::string_view piece;
    bool control = false;
    if (length == 0) {
      piece = "?";
      length = 1;
    } else if (c < 0x20 || c == 0x7F) {
      piece = " ";
      control = true;
    } else {
      piece = text.substr(i, length);
    }
    i += length;
    if (control && (out.empty() || out.back() == ' ')) continue;
    if (out.size() + piece.size() > max_bytes) {
      cut = true;
      break;
    }
    out += piece;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (cut) out += "...";
  return out;
}

}  // namespace metrics_adapter::net
