#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unit/net/fake_http_server.h"

namespace metrics_adapter::prometheus::testing {

using net::testing::RecordedRequest;
using net::testing::Reply;
// A plain-HTTP Prometheus stand-in: the shared fake server.
using FakePrometheus = net::testing::FakeHttpServer;

// Decodes application/x-www-form-urlencoded text ('+' is a space, %XX a byte). Written
// independently of the client's encoder so round trips test both sides.
inline std::string formDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size() &&
               std::isxdigit(static_cast<unsigned char>(text[i + 1])) != 0 &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2])) != 0) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The decoded name=value pairs of a query string or form body, in order.
inline std::vector<std::pair<std::string, std::string>> parseForm(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  while (!text.empty()) {
    const auto amp = text.find('&');
    const std::string_view item = text.substr(0, amp);
    const auto eq = item.find('=');
    pairs.emplace_back(formDecode(item.substr(0, eq)),
                       eq == std::string_view::npos ? "" : formDecode(item.substr(eq + 1)));
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp + 1);
  }
  return pairs;
}

// The first decoded value of `name` in a query string or form body ("" when absent).
inline std::string formValue(std::string_view text, const std::string& name) {
  for (const auto& [key, value] : parseForm(text)) {
    if (key == name) return value;
  }
  return "";
}

}  // namespace metrics_adapter::prometheus::testing
