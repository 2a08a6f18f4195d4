#include "prometheus/request_headers.h"

#include <algorithm>
#include <vector>

#include "metrics_adapter/net/base64.h"

namespace metrics_adapter::prometheus {

bool isHeaderTokenChar(char c) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         kSpecials.find(c) != std::string_view::npos;
}

std::string canonicalHeaderName(std::string_view name) {
  std::string out(name);
  if (!std::all_of(out.begin(), out.end(), isHeaderTokenChar)) return out;
  bool upper = true;
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    } else if (!upper && c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
    upper = c == '-';
  }
  return out;
}

HeaderList wireHeaders(const HeaderList& headers) {
  HeaderList out;
  for (const auto& [raw_name, value] : headers) {
    const std::string name = canonicalHeaderName(raw_name);
    const auto same = std::find_if(out.begin(), out.end(),
                                   [&name](const auto& entry) { return entry.first == name; });
    if (same == out.end()) {
      out.emplace_back(name, value);
    } else {
      same->second.append("\r\n").append(name).append(":").append(value);
    }
  }
  return out;
}

std::string basicAuthorization(std::string_view username, std::string_view password) {
  std::string credentials(username);
  credentials.push_back(':');
  credentials.append(password);
  return "Basic " + net::encodeBase64(credentials);
}

}  // namespace metrics_adapter::prometheus
