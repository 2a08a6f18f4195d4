#include "metrics_adapter/text/percent_encoding.h"

#include <gtest/gtest.h>

#include <string>

namespace metrics_adapter::text {
namespace {

TEST(PercentEncodeTest, KeepsOnlyUnreservedCharacters) {
  struct Case {
    std::string input;
    std::string expected;
  };
  // RFC 3986 unreserved: ALPHA DIGIT - . _ ~; everything else is %XX with upper-case hex.
  const Case cases[] = {
      {"abcXYZ019-._~", "abcXYZ019-._~"},
      {" ", "%20"},
      {"+", "%2B"},
      {"&=", "%26%3D"},
      {"{job=\"a|b\"}", "%7Bjob%3D%22a%7Cb%22%7D"},
      {"a\nb", "a%0Ab"},
      {"\xC3\xA9", "%C3%A9"},  // é in UTF-8
      {"%", "%25"},
      {"", ""},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(percentEncode(c.input), c.expected) << c.input;
  }
}

}  // namespace
}  // namespace metrics_adapter::text
