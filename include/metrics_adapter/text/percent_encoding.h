#pragma once

#include <string>
#include <string_view>

namespace metrics_adapter::text {

// Percent-encoding for URL paths, query strings and application/x-www-form-urlencoded bodies:
// every byte but RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~) becomes %XX, so the
// text survives every decoder (path, query, form). Locale-independent.
inline std::string percentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  encoded.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      encoded += c;
    } else {
      encoded += '%';
      encoded += kHex[byte >> 4];
      encoded += kHex[byte & 0xF];
    }
  }
  return encoded;
}

}  // namespace metrics_adapter::text
