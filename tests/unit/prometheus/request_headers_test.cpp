#include "prometheus/request_headers.h"

#include <gtest/gtest.h>

#include <string>

namespace metrics_adapter::prometheus {
namespace {

// Expected values follow Go's net/textproto.CanonicalMIMEHeaderKey.
TEST(CanonicalHeaderNameTest, UpperCasesWordStartsAndLowerCasesTheRest) {
  struct Case {
    std::string name;
    std::string canonical;
  };
  const Case cases[] = {
      {"x-scope-orgid", "X-Scope-Orgid"},
      {"X-Scope-OrgID", "X-Scope-Orgid"},  // Go sends Mimir's tenant header this way too
      {"THANOS-TENANT", "Thanos-Tenant"},
      {"authorization", "Authorization"},
      {"accept", "Accept"},
      {"x--double", "X--Double"},
      {"-leading", "-Leading"},
      {"trailing-", "Trailing-"},
      {"x_under_score", "X_under_score"},  // only '-' starts a word
      {"x.dot.name", "X.dot.name"},
      {"1st-name", "1st-Name"},
      {"a", "A"},
      {"", ""},
      // A byte that is no token character: Go leaves the whole name alone.
      {"bad name", "bad name"},
      {"x-bad:colon", "x-bad:colon"},
      {"x-caf\xc3\xa9", "x-caf\xc3\xa9"},
  };
  for (const auto& c : cases) EXPECT_EQ(canonicalHeaderName(c.name), c.canonical) << c.name;
}

TEST(WireHeadersTest, RepeatedNamesBecomeRepeatedLinesInOrder) {
  const HeaderList headers = {{"x-scope-orgid", "tenant-a"},
                              {"X-Other", "1"},
                              {"X-SCOPE-ORGID", "tenant-b"},
                              {"x-scope-orgid", ""},
                              {"x-other", "2"}};
  const HeaderList expected = {
      {"X-Scope-Orgid", "tenant-a\r\nX-Scope-Orgid:tenant-b\r\nX-Scope-Orgid:"},
      {"X-Other", "1\r\nX-Other:2"}};
  EXPECT_EQ(wireHeaders(headers), expected);
}

TEST(WireHeadersTest, DistinctNamesStayOneEntryEach) {
  const HeaderList headers = {{"b-name", "2"}, {"a-name", "1"}};
  const HeaderList expected = {{"B-Name", "2"}, {"A-Name", "1"}};
  EXPECT_EQ(wireHeaders(headers), expected);
  EXPECT_TRUE(wireHeaders({}).empty());
}

TEST(BasicAuthorizationTest, IsBase64OfUserColonPassword) {
  // RFC 7617's example, and values whose base64 needs padding.
  EXPECT_EQ(basicAuthorization("Aladdin", "open sesame"), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  EXPECT_EQ(basicAuthorization("a", "b"), "Basic YTpi");
  EXPECT_EQ(basicAuthorization("user", "p:ss"), "Basic dXNlcjpwOnNz");  // ':' in the password
  EXPECT_EQ(basicAuthorization("u", ""), "Basic dTo=");
}

}  // namespace
}  // namespace metrics_adapter::prometheus
