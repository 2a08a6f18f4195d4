#include "metrics_adapter/auth/failed_authentication.h"

#include <string_view>
#include <vector>

#include "metrics_adapter/server/percent_decode.h"
#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::auth {
namespace {

int base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Whether `encoded` is padded standard base64 (Go's StdEncoding, which skips CR and LF) of text
// holding a ':', as Go's Request.BasicAuth requires.
bool isBasicCredentials(std::string_view encoded) {
  std::string digits;
  for (const char c : encoded) {
    if (c != '\r' && c != '\n') digits += c;
  }
  if (digits.size() % 4 != 0) return false;
  std::size_t padding = 0;
  while (padding < 2 && padding < digits.size() && digits[digits.size() - 1 - padding] == '=') {
    ++padding;
  }
  bool colon = false;
  unsigned bits = 0;
  int count = 0;
  for (std::size_t i = 0; i + padding < digits.size(); ++i) {
    const int value = base64Value(digits[i]);
    if (value < 0) return false;
    bits = (bits << 6U) | static_cast<unsigned>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      colon = colon || ((bits >> static_cast<unsigned>(count)) & 0xFFU) == ':';
    }
  }
  return colon;
}

bool hasBasic(std::string_view authorization) {
  constexpr std::string_view kPrefix = "Basic ";
  return text::startsWithIgnoringAsciiCase(authorization, kPrefix) &&
         isBasicCredentials(authorization.substr(kPrefix.size()));
}

// strings.Split(TrimSpace(header), " "): at least two parts, the first "bearer" in any case.
bool hasBearer(std::string_view authorization) {
  const std::string_view value = text::trimAsciiSpace(authorization);
  const auto space = value.find(' ');
  return space != std::string_view::npos &&
         text::equalsIgnoringAsciiCase(value.substr(0, space), "bearer");
}

bool hasAccessToken(std::string_view target) {
  const auto question = target.find('?');
  if (question == std::string_view::npos) return false;
  std::string_view query = target.substr(question + 1);
  std::string key;
  std::string value;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto equals = pair.find('=');
    if (!server::percentDecodeInto(pair.substr(0, equals), true, key) || key != "access_token") {
      continue;
    }
    const std::string_view raw =
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    // The first access_token is the one Go's Query().Get reads.
    return server::percentDecodeInto(raw, true, value) && !text::trimAsciiSpace(value).empty();
  }
  return false;
}

}  // namespace

std::string failedAuthenticationMessage(const server::HttpRequest& request) {
  const std::string_view authorization = request.headerView("Authorization");
  std::vector<std::string_view> methods;
  if (hasBasic(authorization)) methods.emplace_back("basic");
  if (hasBearer(authorization)) methods.emplace_back("bearer");
  if (hasAccessToken(request.target)) methods.emplace_back("access_token");
  if (!request.peer_certificates_pem.empty()) methods.emplace_back("x509");
  if (methods.empty()) return "Authentication failed, no credentials provided";
  std::string message = "Authentication failed, attempted: ";
  for (std::size_t i = 0; i < methods.size(); ++i) {
    if (i > 0) message += ", ";
    message += methods[i];
  }
  return message;
}

}  // namespace metrics_adapter::auth
