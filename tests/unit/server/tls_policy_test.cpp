#include "server/tls_policy.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace metrics_adapter::server {
namespace {

TEST(TlsPolicyTest, MinVersionNames) {
  EXPECT_EQ(parseTlsMinVersion("VersionTLS12"), TLS1_2_VERSION);
  EXPECT_EQ(parseTlsMinVersion("VersionTLS13"), TLS1_3_VERSION);
}

TEST(TlsPolicyTest, VersionsBelowTls12AreRefusedByName) {
  // docs/api-contract.md "TLS and client certificates" item 1: TLS >= 1.2.
  for (const char* name : {"VersionTLS10", "VersionTLS11", "", "TLS12"}) {
    try {
      parseTlsMinVersion(name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("\"") + name + "\""), std::string::npos)
          << e.what();
    }
  }
}

struct CipherCase {
  const char* name;
  std::vector<std::string> iana;
  std::string openssl;
};

// OpenSSL spellings as listed by `openssl ciphers -stdname` for the same IANA suites.
class CipherListTest : public ::testing::TestWithParam<CipherCase> {};

TEST_P(CipherListTest, MapsIanaNamesInOrder) {
  EXPECT_EQ(openSslCipherList(GetParam().iana), GetParam().openssl);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CipherListTest,
    ::testing::Values(
        CipherCase{"DefaultIsEcdheAeadOnly",
                   {},
                   "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                   "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                   "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"},
        CipherCase{"EcdsaGcmAndRsaChacha",
                   {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"},
                   "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305"},
        CipherCase{"OrderKept",
                   {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"},
                   "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-SHA"},
        CipherCase{"GoLegacyChachaAlias",
                   {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"},
                   "ECDHE-ECDSA-CHACHA20-POLY1305"},
        CipherCase{"RsaKeyExchange", {"TLS_RSA_WITH_AES_128_GCM_SHA256"}, "AES128-GCM-SHA256"},
        CipherCase{"Tls13NamesIgnored",
                   {"TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
                   "ECDHE-RSA-AES128-GCM-SHA256"},
        CipherCase{"OnlyTls13Names", {"TLS_AES_256_GCM_SHA384"}, ""}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TlsPolicyTest, UnknownSuiteIsNamed) {
  try {
    openSslCipherList({"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"});
    FAIL() << "an OpenSSL-style name was accepted as a Go name";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"ECDHE-RSA-AES128-GCM-SHA256\""), std::string::npos)
        << e.what();
  }
}

TEST(TlsPolicyTest, OnlyTls13SuitesRaiseTheMinimumVersion) {
  // No TLS 1.2 suite left means TLS 1.2 cannot be negotiated, as in Go.
  EXPECT_EQ(makeTlsPolicy("VersionTLS12", {"TLS_AES_128_GCM_SHA256"}).min_version, TLS1_3_VERSION);
  EXPECT_EQ(makeTlsPolicy("VersionTLS12", {}).min_version, TLS1_2_VERSION);
}

}  // namespace
}  // namespace metrics_adapter::server
