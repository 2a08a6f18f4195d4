#pragma once

#include <openssl/x509.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace metrics_adapter::server {

// The names a certificate serves when its --tls-sni-cert-key gives no patterns, as upstream
// extracts them: the subject CN when it is a DNS name ("*" and "*." wildcards allowed, not an IP
// address), then every DNS SAN, all lower-cased. IP SANs are left out: clients cannot ask for an
// IP by SNI, and a certificate naming the server's own address would otherwise take over every
// connection that sends no SNI.
std::vector<std::string> certificateNames(X509* certificate);

// The text of an IP address as the table keys it (IPv4 dotted, IPv6 compressed, an IPv4-mapped
// IPv6 address as IPv4), or nullopt when `text` is not an IP address.
std::optional<std::string> canonicalIpAddress(std::string_view text);

// The names the SNI certificates of one server claim.
struct SniNames {
  std::vector<std::string> patterns;   // from the flag: "a.example.com", "*.example.com", an IP
  std::vector<std::string> extracted;  // certificateNames(); used only when `patterns` is empty
};

// Which SNI certificate serves a connection, by upstream's rules: a pattern given on the command
// line beats a name extracted from a certificate, and among equals the earlier certificate wins.
// Immutable once built, so connections read it without a lock.
class SniNameTable {
 public:
  explicit SniNameTable(const std::vector<SniNames>& certificates);

  // The index of the certificate for a client asking for `server_name` (ASCII case ignored): an
  // exact name first, else the name with its left-most label replaced by "*" ("a.example.com"
  // matches "*.example.com", "example.com" and "a.b.example.com" do not). nullopt: the default
  // certificate.
  std::optional<std::size_t> forServerName(std::string_view server_name) const;

  // For a client that sent no SNI: the certificate whose pattern is the local address it
  // connected to (any IP text canonicalIpAddress reads), else nullopt.
  std::optional<std::size_t> forLocalAddress(std::string_view address) const;

  bool empty() const { return by_name_.empty(); }

 private:
  std::optional<std::size_t> find(const std::string& key) const;

  std::unordered_map<std::string, std::size_t> by_name_;
};

}  // namespace metrics_adapter::server
