#include "server/tls_policy.h"

#include <openssl/ssl.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace metrics_adapter::server {
namespace {

struct SuiteName {
  std::string_view iana;
  std::string_view openssl;  // empty for TLS 1.3 suites, which Go does not let users configure
};

// Every name Go's crypto/tls accepts (CipherSuites() and InsecureCipherSuites(), plus its two
// legacy ChaCha20 aliases), mapped to OpenSSL's spelling. Suites this OpenSSL build lacks
// (RC4) are still recognised; OpenSSL then simply skips them.
constexpr SuiteName kSuites[] = {
    {"TLS_AES_128_GCM_SHA256", ""},
    {"TLS_AES_256_GCM_SHA384", ""},
    {"TLS_CHACHA20_POLY1305_SHA256", ""},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA"},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
    {"TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA"},
};

constexpr std::string_view kDefaultCipherList =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

const SuiteName* findSuite(std::string_view iana) {
  for (const SuiteName& suite : kSuites) {
    if (suite.iana == iana) return &suite;
  }
  return nullptr;
}

}  // namespace

int parseTlsMinVersion(std::string_view name) {
  if (name == "VersionTLS12") return TLS1_2_VERSION;
  if (name == "VersionTLS13") return TLS1_3_VERSION;
  throw std::invalid_argument("unsupported tls_min_version \"" + std::string(name) +
                              "\" (supported: VersionTLS12, VersionTLS13)");
}

std::string openSslCipherList(const std::vector<std::string>& iana_names) {
  if (iana_names.empty()) return std::string(kDefaultCipherList);
  std::string list;
  for (const std::string& name : iana_names) {
    const SuiteName* suite = findSuite(name);
    if (suite == nullptr) {
      throw std::invalid_argument("unknown TLS cipher suite \"" + name + "\" in tls_cipher_suites");
    }
    if (suite->openssl.empty()) continue;
    if (!list.empty()) list += ':';
    list += suite->openssl;
  }
  return list;
}

TlsPolicy makeTlsPolicy(std::string_view min_version, const std::vector<std::string>& suites) {
  TlsPolicy policy;
  policy.min_version = parseTlsMinVersion(min_version);
  policy.cipher_list = openSslCipherList(suites);
  if (policy.cipher_list.empty()) policy.min_version = TLS1_3_VERSION;
  return policy;
}

}  // namespace metrics_adapter::server
