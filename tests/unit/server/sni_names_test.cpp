#include "server/sni_names.h"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "metrics_adapter/server/sni_cert_key.h"
#include "server/self_signed.h"

namespace metrics_adapter::server {
namespace {

TEST(SniCertKeyTest, ReadsPathsAndLowerCasedPatterns) {
  struct Case {
    const char* value;
    SniCertKey expected;
  };
  const Case cases[] = {
      {"a.crt,a.key", {.cert_file = "a.crt", .key_file = "a.key", .names = {}}},
      {" a.crt , a.key ", {.cert_file = "a.crt", .key_file = "a.key", .names = {}}},
      {"a.crt,a.key:Foo.Example.COM",
       {.cert_file = "a.crt", .key_file = "a.key", .names = {"foo.example.com"}}},
      {"/tls/a.crt,/tls/a.key:*.foo.com, foo.com",
       {.cert_file = "/tls/a.crt", .key_file = "/tls/a.key", .names = {"*.foo.com", "foo.com"}}},
      // The first ':' ends the paths, so an IPv6 pattern reads whole.
      {"a.crt,a.key:::1,10.0.0.1",
       {.cert_file = "a.crt", .key_file = "a.key", .names = {"::1", "10.0.0.1"}}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(parseSniCertKey(c.value), c.expected) << c.value;
    EXPECT_EQ(parseSniCertKey(formatSniCertKey(c.expected)), c.expected) << c.value;
  }
}

TEST(SniCertKeyTest, RefusesWhatIsNotAPairOrHasAnEmptyPattern) {
  struct Case {
    const char* value;
    const char* problem;
  };
  const Case cases[] = {
      {"a.crt", "certificate and key file paths"},
      {"a.crt,a.key,b.key", "certificate and key file paths"},
      {"a.crt,", "empty key file path"},
      {",a.key", "empty certificate file path"},
      {"a.crt,a.key:", "empty list of domain patterns"},
      {"a.crt,a.key: ", "empty list of domain patterns"},
      {"a.crt,a.key:a.com,,b.com", "empty domain pattern"},
      {"a.crt,a.key:a.com,", "empty domain pattern"},
  };
  for (const Case& c : cases) {
    try {
      parseSniCertKey(c.value);
      ADD_FAILURE() << "accepted " << c.value;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.problem), std::string::npos) << e.what();
    }
  }
}

// Certificates 0..2 of one server, as the table reads their names.
SniNameTable exampleTable() {
  return SniNameTable({
      // 0: extracted names only.
      {.patterns = {}, .extracted = {"api.example.com", "*.example.com", "shared.example.com"}},
      // 1: explicit patterns.
      {.patterns = {"shared.example.com", "*.other.org", "10.0.0.7"}, .extracted = {"ignored.io"}},
      // 2: the same extracted wildcard as 0, later, so 0 keeps it.
      {.patterns = {}, .extracted = {"*.example.com", "only-two.example.com"}},
  });
}

TEST(SniNameTableTest, ChoosesByUpstreamRules) {
  const SniNameTable table = exampleTable();
  struct Case {
    const char* server_name;
    std::optional<std::size_t> expected;
  };
  const Case cases[] = {
      {"api.example.com", 0},
      {"API.Example.COM", 0},           // case-insensitive
      {"x.example.com", 0},             // wildcard, the earlier certificate
      {"only-two.example.com", 2},      // exact beats 0's wildcard
      {"shared.example.com", 1},        // explicit beats extracted
      {"a.other.org", 1},               // explicit wildcard
      {"A.OTHER.ORG", 1},               //
      {"other.org", std::nullopt},      // "*." needs one more label
      {"a.b.other.org", std::nullopt},  // ... and exactly one
      {"example.com", std::nullopt},    //
      {"ignored.io", std::nullopt},     // extracted names unused when patterns are given
      {"unknown.net", std::nullopt},    // the default certificate
      {"", std::nullopt},               //
      {"10.0.0.7", 1},                  // a (non-compliant) IP sent as SNI, as upstream
  };
  for (const Case& c : cases) {
    EXPECT_EQ(table.forServerName(c.server_name), c.expected) << c.server_name;
  }
}

TEST(SniNameTableTest, LocalAddressMatchesOnlyIpPatterns) {
  const SniNameTable table = exampleTable();
  EXPECT_EQ(table.forLocalAddress("10.0.0.7"), 1u);
  EXPECT_EQ(table.forLocalAddress("::ffff:10.0.0.7"), 1u);  // a dual-stack socket's view
  EXPECT_EQ(table.forLocalAddress("10.0.0.8"), std::nullopt);
  EXPECT_EQ(table.forLocalAddress("api.example.com"), std::nullopt);
  EXPECT_EQ(table.forLocalAddress(""), std::nullopt);

  const SniNameTable v6({{.patterns = {"0:0:0:0:0:0:0:1"}, .extracted = {}}});
  EXPECT_EQ(v6.forLocalAddress("::1"), 0u);
}

TEST(SniNameTableTest, EarlierCertificateWinsAmongPatterns) {
  const SniNameTable table({{.patterns = {"a.example.com"}, .extracted = {}},
                            {.patterns = {"a.example.com", "b.example.com"}, .extracted = {}}});
  EXPECT_EQ(table.forServerName("a.example.com"), 0u);
  EXPECT_EQ(table.forServerName("b.example.com"), 1u);
}

X509Ptr certificateFor(const std::string& common_name, std::vector<std::string> dns_names,
                       std::vector<std::string> ip_addresses) {
  SelfSignedSpec spec;
  spec.common_name = common_name;
  spec.dns_names = std::move(dns_names);
  spec.ip_addresses = std::move(ip_addresses);
  return std::move(generateSelfSigned(spec).chain.front());
}

TEST(CertificateNamesTest, CommonNameWhenADnsNameThenDnsSans) {
  struct Case {
    std::string common_name;
    std::vector<std::string> dns_names;
    std::vector<std::string> ip_addresses;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {"api.example.com",
       {"api.example.com", "Alt.Example.com"},
       {"10.0.0.1"},
       {"api.example.com", "api.example.com", "alt.example.com"}},  // IP SANs left out
      {"*.example.com", {}, {}, {"*.example.com"}},
      {"API.EXAMPLE.COM", {}, {}, {"api.example.com"}},
      {"10.0.0.1", {"a.example.com"}, {}, {"a.example.com"}},  // an IP CN is not a name
      {"front proxy client", {}, {}, {}},                      // nor a CN with spaces
      {"-bad.example.com", {"a.example.com"}, {}, {"a.example.com"}},
  };
  for (const Case& c : cases) {
    const X509Ptr certificate = certificateFor(c.common_name, c.dns_names, c.ip_addresses);
    EXPECT_EQ(certificateNames(certificate.get()), c.expected) << c.common_name;
  }
}

TEST(CanonicalIpAddressTest, Table) {
  EXPECT_EQ(canonicalIpAddress("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(canonicalIpAddress("0:0::1"), "::1");
  EXPECT_EQ(canonicalIpAddress("::FFFF:192.168.0.1"), "192.168.0.1");
  EXPECT_EQ(canonicalIpAddress("example.com"), std::nullopt);
  EXPECT_EQ(canonicalIpAddress("127.1"), std::nullopt);  // inet_pton takes only dotted quads
  EXPECT_EQ(canonicalIpAddress(""), std::nullopt);
}

}  // namespace
}  // namespace metrics_adapter::server
