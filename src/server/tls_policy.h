#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::server {

// What the server's TLS layer negotiates, derived from ServerOptions.
struct TlsPolicy {
  int min_version = 0;      // OpenSSL protocol constant (TLS1_2_VERSION or TLS1_3_VERSION)
  std::string cipher_list;  // OpenSSL TLS 1.2 cipher list; TLS 1.3 suites stay OpenSSL's default
};

// OpenSSL's constant for a Go-style version name ("VersionTLS12", "VersionTLS13"). Throws
// std::invalid_argument naming the value for anything else, including the pre-1.2 versions.
int parseTlsMinVersion(std::string_view name);

// The OpenSSL TLS 1.2 cipher list for Go/IANA suite names, in the given order. An empty list
// yields the default: ECDHE key exchange with AES-GCM or ChaCha20-Poly1305 only. TLS 1.3 names
// are accepted and ignored, as Go does; if only TLS 1.3 names are given the result is empty,
// meaning no TLS 1.2 suite is allowed. Throws std::invalid_argument naming an unknown suite.
std::string openSslCipherList(const std::vector<std::string>& iana_names);

// Both of the above; the minimum version is raised to TLS 1.3 when no TLS 1.2 suite remains.
TlsPolicy makeTlsPolicy(std::string_view min_version, const std::vector<std::string>& suites);

}  // namespace metrics_adapter::server
