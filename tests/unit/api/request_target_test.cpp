#include "metrics_adapter/api/request_target.h"

#include <gtest/gtest.h>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/net/percent_decode.h"

namespace metrics_adapter::api {
namespace {

TEST(RequestTargetTest, DecodesTheHpaWildcardAndFormEncodedSelectors) {
  // The query string exactly as the aggregator forwards it (api.md §2.4).
  auto target = parseRequestTarget(
      "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/duty_cycle_current"
      "?labelSelector=app%3Dfoo%2Ctier+in+%28a%2Cb%29%2C%21legacy&metricLabelSelector=verb%3DGET");
  EXPECT_EQ(target.path,
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/duty_cycle_current");
  ASSERT_EQ(target.segments.size(), 8u);
  EXPECT_EQ(target.segments[6], "*");
  EXPECT_EQ(target.get("labelSelector"), "app=foo,tier in (a,b),!legacy");
  EXPECT_EQ(target.get("metricLabelSelector"), "verb=GET");
  EXPECT_FALSE(target.has("pretty"));
}

TEST(RequestTargetTest, FirstRepeatedParameterWins) {
  auto target = parseRequestTarget("/x?labelSelector=app%3Dweb&labelSelector=app%3Dother");
  EXPECT_EQ(target.get("labelSelector"), "app=web");
}

TEST(RequestTargetTest, TrailingAndDoubleSlashesDoNotMakeEmptySegments) {
  auto target = parseRequestTarget("/apis/custom.metrics.k8s.io/v1beta1/");
  EXPECT_EQ(target.segments,
            (std::vector<std::string>{"apis", "custom.metrics.k8s.io", "v1beta1"}));
  EXPECT_TRUE(parseRequestTarget("/").segments.empty());
}

TEST(RequestTargetTest, EncodedSlashSplitsASegmentLikeGo) {
  auto target = parseRequestTarget("/a%2Fb/c");
  EXPECT_EQ(target.segments, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(RequestTargetTest, PlusIsLiteralInPathsAndSpaceInQueries) {
  auto target = parseRequestTarget("/a+b?q=a+b&flag");
  EXPECT_EQ(target.segments[0], "a+b");
  EXPECT_EQ(target.get("q"), "a b");
  EXPECT_TRUE(target.has("flag"));
  EXPECT_EQ(target.get("flag"), "");
}

TEST(RequestTargetTest, MalformedEscapesAreBadRequests) {
  for (const char* bad : {"/a%", "/a%2", "/a%zz", "/a?x=%G0", "/a?%=1"}) {
    try {
      parseRequestTarget(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ApiError& error) {
      EXPECT_EQ(error.code(), 400) << bad;
    }
  }
}

TEST(PercentDecodeTest, Table) {
  struct Case {
    const char* in;
    bool plus_is_space;
    std::optional<std::string> out;
  };
  const Case cases[] = {
      {"", false, ""},
      {"abc", false, "abc"},
      {"%41%62", false, "Ab"},
      {"%2a", false, "*"},
      {"a+b", true, "a b"},
      {"a+b", false, "a+b"},
      {"%00", false, std::string(1, '\0')},
      {"%", false, std::nullopt},
      {"%4", false, std::nullopt},
      {"%4g", false, std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(net::percentDecode(c.in, c.plus_is_space), c.out) << c.in;
}

}  // namespace
}  // namespace metrics_adapter::api
