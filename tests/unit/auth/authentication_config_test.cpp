#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "metrics_adapter/auth/authenticator.h"
#include "unit/net/test_certificates.h"

namespace metrics_adapter::auth {
namespace {

using json = nlohmann::json;
using net::testing::makeAuthority;
using net::testing::TestAuthority;
using Strings = std::vector<std::string>;

json configMap(json data) {
  return {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "extension-apiserver-authentication"}, {"namespace", "kube-system"}}},
      {"data", std::move(data)}};
}

// The kubeadm ConfigMap of docs/api-contract.md "Authentication (delegated)", lists written as JSON
// inside strings.
TEST(AuthenticationConfigTest, ReadsEveryKeyOfTheKubeadmConfigMap) {
  const TestAuthority client_ca = makeAuthority("client-ca");
  const TestAuthority front_proxy_ca = makeAuthority("front-proxy-ca");
  const AuthenticationConfig config = parseAuthenticationConfigMap(configMap({
      {"client-ca-file", client_ca.pem()},
      {"requestheader-client-ca-file", front_proxy_ca.pem()},
      {"requestheader-allowed-names", R"(["front-proxy-client"])"},
      {"requestheader-username-headers", R"(["X-Remote-User"])"},
      {"requestheader-uid-headers", R"(["X-Remote-Uid"])"},
      {"requestheader-group-headers", R"(["X-Remote-Group"])"},
      {"requestheader-extra-headers-prefix", R"(["X-Remote-Extra-"])"},
  }));
  EXPECT_EQ(config.client_ca_pem, client_ca.pem());
  EXPECT_EQ(config.requestheader_ca_pem, front_proxy_ca.pem());
  EXPECT_EQ(config.allowed_names, Strings{"front-proxy-client"});
  EXPECT_EQ(config.username_headers, Strings{"X-Remote-User"});
  EXPECT_EQ(config.uid_headers, Strings{"X-Remote-Uid"});
  EXPECT_EQ(config.group_headers, Strings{"X-Remote-Group"});
  EXPECT_EQ(config.extra_header_prefixes, Strings{"X-Remote-Extra-"});
}

TEST(AuthenticationConfigTest, ListsKeepTheirOrderAndEveryItem) {
  const AuthenticationConfig config = parseAuthenticationConfigMap(configMap({
      {"requestheader-username-headers", R"(["X-Remote-User","X-Forwarded-User"])"},
      {"requestheader-allowed-names", R"(["front-proxy-client","aggregator"])"},
  }));
  EXPECT_EQ(config.username_headers, (Strings{"X-Remote-User", "X-Forwarded-User"}));
  EXPECT_EQ(config.allowed_names, (Strings{"front-proxy-client", "aggregator"}));
}

// Without a request-header CA the writer leaves out every requestheader key: no front-proxy
// authentication, and the header names keep their defaults.
TEST(AuthenticationConfigTest, MissingKeysKeepDefaults) {
  const TestAuthority client_ca = makeAuthority("client-ca");
  const AuthenticationConfig config =
      parseAuthenticationConfigMap(configMap({{"client-ca-file", client_ca.pem()}}));
  const AuthenticationConfig defaults;
  EXPECT_EQ(config.client_ca_pem, client_ca.pem());
  EXPECT_TRUE(config.requestheader_ca_pem.empty());
  EXPECT_TRUE(config.allowed_names.empty());
  EXPECT_EQ(config.username_headers, defaults.username_headers);
  EXPECT_EQ(config.group_headers, defaults.group_headers);
  EXPECT_EQ(config.extra_header_prefixes, defaults.extra_header_prefixes);
  EXPECT_TRUE(config.uid_headers.empty());
}

TEST(AuthenticationConfigTest, NoDataMeansDefaults) {
  const AuthenticationConfig config = parseAuthenticationConfigMap({{"kind", "ConfigMap"}});
  EXPECT_TRUE(config.client_ca_pem.empty());
  EXPECT_TRUE(config.requestheader_ca_pem.empty());
  EXPECT_EQ(config.username_headers, Strings{"X-Remote-User"});
}

// C61: "[]" allowed names = any CN signed by the front-proxy CA, which the config expresses
// as an empty list. Go reads "null" as an empty list too.
TEST(AuthenticationConfigTest, C61_EmptyAllowedNamesListIsEmpty) {
  for (const char* text : {"[]", "null", ""}) {
    const AuthenticationConfig config =
        parseAuthenticationConfigMap(configMap({{"requestheader-allowed-names", text}}));
    EXPECT_TRUE(config.allowed_names.empty()) << text;
  }
}

TEST(AuthenticationConfigTest, EmptyHeaderListReplacesTheDefault) {
  const AuthenticationConfig config =
      parseAuthenticationConfigMap(configMap({{"requestheader-username-headers", "[]"}}));
  EXPECT_TRUE(config.username_headers.empty());
}

struct BadDataCase {
  std::string name;
  std::string key;
  json value;
};

void PrintTo(const BadDataCase& value, std::ostream* out) { *out << value.name; }

class AuthenticationConfigBadDataTest : public ::testing::TestWithParam<BadDataCase> {};

TEST_P(AuthenticationConfigBadDataTest, ThrowsNamingTheKey) {
  try {
    parseAuthenticationConfigMap(configMap({{GetParam().key, GetParam().value}}));
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().key), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Data, AuthenticationConfigBadDataTest,
    ::testing::Values(
        BadDataCase{"ListNotJson", "requestheader-allowed-names", "[front-proxy-client]"},
        BadDataCase{"ListNotArray", "requestheader-username-headers", R"("X-Remote-User")"},
        BadDataCase{"ListWithNumber", "requestheader-group-headers", R"(["X-Remote-Group",1])"},
        BadDataCase{"ListNotInString", "requestheader-extra-headers-prefix",
                    json::array({"X-Remote-Extra-"})},
        BadDataCase{"CaNotPem", "client-ca-file", "not a certificate"},
        BadDataCase{"CaCorruptPem", "requestheader-client-ca-file",
                    "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n"},
        BadDataCase{"CaNotString", "client-ca-file", 42}),
    [](const ::testing::TestParamInfo<BadDataCase>& info) { return info.param.name; });

TEST(AuthenticationConfigTest, RefusesNonObjects) {
  EXPECT_THROW(parseAuthenticationConfigMap(json::array()), std::invalid_argument);
  EXPECT_THROW(parseAuthenticationConfigMap({{"data", "x"}}), std::invalid_argument);
}

}  // namespace
}  // namespace metrics_adapter::auth
