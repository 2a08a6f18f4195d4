#include "metrics_adapter/server/sni_cert_key.h"

#include <stdexcept>
#include <string>

#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::server {
namespace {

std::vector<std::string_view> splitOnComma(std::string_view text) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t comma = text.find(',');
    parts.push_back(text::trimAsciiSpace(text.substr(0, comma)));
    if (comma == std::string_view::npos) return parts;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

SniCertKey parseSniCertKey(std::string_view value) {
  SniCertKey result;
  // As upstream: the first ':' ends the paths, so an IPv6 pattern ("a.crt,a.key:::1") still
  // reads, and a path cannot hold a ':'.
  const std::size_t colon = value.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view patterns = text::trimAsciiSpace(value.substr(colon + 1));
    if (patterns.empty()) {
      throw std::invalid_argument("an empty list of domain patterns after ':'");
    }
    for (const std::string_view pattern : splitOnComma(patterns)) {
      if (pattern.empty()) throw std::invalid_argument("an empty domain pattern");
      result.names.push_back(text::lowerAscii(pattern));
    }
  }
  const std::vector<std::string_view> paths = splitOnComma(value.substr(0, colon));
  if (paths.size() != 2) {
    throw std::invalid_argument("expected the certificate and key file paths separated by a comma");
  }
  if (paths[0].empty()) throw std::invalid_argument("an empty certificate file path");
  if (paths[1].empty()) throw std::invalid_argument("an empty key file path");
  result.cert_file = paths[0];
  result.key_file = paths[1];
  return result;
}

std::string formatSniCertKey(const SniCertKey& cert_key) {
  std::string text = cert_key.cert_file + "," + cert_key.key_file;
  for (std::size_t i = 0; i < cert_key.names.size(); ++i) {
    text += (i == 0 ? ":" : ",") + cert_key.names[i];
  }
  return text;
}

}  // namespace metrics_adapter::server
