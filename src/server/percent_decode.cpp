#include "metrics_adapter/server/percent_decode.h"

namespace metrics_adapter::server {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percentDecode(std::string_view text, bool plus_is_space) {
  std::string decoded;
  if (!percentDecodeInto(text, plus_is_space, decoded)) return std::nullopt;
  return decoded;
}

bool percentDecodeInto(std::string_view text, bool plus_is_space, std::string& decoded) {
  decoded.clear();
  decoded.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return false;
      const int high = hexValue(text[i + 1]);
      const int low = hexValue(text[i + 2]);
      if (high < 0 || low < 0) return false;
      decoded.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      decoded.push_back(' ');
    } else {
      decoded.push_back(c);
    }
  }
  return true;
}

}  // namespace metrics_adapter::server
