#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::server {

// A serving certificate chosen by the name a client asks for (TLS SNI), as upstream's
// --tls-sni-cert-key gives it: "cert.crt,key.key" or "cert.crt,key.key:pattern,pattern".
struct SniCertKey {
  std::string cert_file;  // PEM chain, leaf first
  std::string key_file;   // PEM private key of the leaf
  // Lower-case domain patterns: "api.example.com", "*.example.com" (exactly one left-most
  // label), or an IP address, which matches a client that sends no SNI and reached that local
  // address. Empty: the certificate's own names (its CN when that is a DNS name, and its DNS
  // SANs).
  std::vector<std::string> names;

  bool operator==(const SniCertKey&) const = default;
};

// Reads one --tls-sni-cert-key value. Spaces around paths and patterns are dropped and patterns
// are lower-cased. Throws std::invalid_argument saying what is wrong (not two comma-separated
// paths, an empty path, an empty pattern list after ':', an empty pattern).
SniCertKey parseSniCertKey(std::string_view value);

// The value in the flag's own syntax, for messages: "a.crt,a.key:x.example.com,*.example.com".
std::string formatSniCertKey(const SniCertKey& cert_key);

}  // namespace metrics_adapter::server
