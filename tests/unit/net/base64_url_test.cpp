#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "metrics_adapter/net/base64.h"
#include "metrics_adapter/net/url.h"

namespace metrics_adapter::net {
namespace {

// RFC 4648 section 10's test vectors.
TEST(Base64Test, EncodesAndDecodesTheRfcVectors) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(encodeBase64(bytes), text) << bytes;
    EXPECT_EQ(decodeBase64(text), bytes) << text;
  }
}

TEST(Base64Test, KeepsEveryByteValue) {
  std::string bytes;
  for (int c = 0; c < 256; ++c) bytes.push_back(static_cast<char>(c));
  EXPECT_EQ(decodeBase64(encodeBase64(bytes)), bytes);
}

TEST(Base64Test, RefusesWhatIsNotBase64) {
  EXPECT_THROW(decodeBase64("Zm9v!mFy"), std::invalid_argument);
  EXPECT_THROW(decodeBase64("Zm9"), std::invalid_argument);
}

TEST(UrlTest, SplitsEveryPart) {
  const UrlParts parts = splitUrl("HTTPS://user@Prometheus.Example:9091/prefix/api?a=1#top");
  EXPECT_EQ(parts.scheme, "https");
  EXPECT_EQ(parts.user_info, "user");
  EXPECT_EQ(parts.host, "prometheus.example");
  EXPECT_EQ(parts.port, 9091);
  EXPECT_EQ(parts.path, "/prefix/api");
  EXPECT_EQ(parts.query, "a=1");
  EXPECT_EQ(parts.fragment, "top");
}

TEST(UrlTest, NoPortIsZeroAndAnIpv6LiteralKeepsItsBrackets) {
  const UrlParts parts = splitUrl("http://[::1]/");
  EXPECT_EQ(parts.host, "[::1]");
  EXPECT_EQ(parts.port, 0);
}

TEST(UrlTest, RefusesWhatIsNotAUrl) {
  EXPECT_THROW(splitUrl("http://exa mple/"), std::invalid_argument);
}

}  // namespace
}  // namespace metrics_adapter::net
