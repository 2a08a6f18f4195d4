#include "prometheus/request_builder.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace metrics_adapter::prometheus {
namespace {

using std::chrono::milliseconds;

TEST(EncodeParamsTest, JoinsEncodedPairsInOrder) {
  EXPECT_EQ(encodeParams({{"match[]", "up{a=\"b\"}"}, {"start", "1.000"}}),
            "match%5B%5D=up%7Ba%3D%22b%22%7D&start=1.000");
  EXPECT_EQ(encodeParams({}), "");
}

TEST(FormatPrometheusTimeTest, SecondsWithThreeDecimals) {
  struct Case {
    long long millis;
    std::string expected;
  };
  const Case cases[] = {
      {1700000000123, "1700000000.123"},
      {1700000000000, "1700000000.000"},
      {1700000000005, "1700000000.005"},
      {0, "0.000"},
      {-500, "-0.500"},  // half a second before the epoch, not -1.5
      {-1500, "-1.500"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(formatPrometheusTime(Clock::time_point(milliseconds(c.millis))), c.expected);
  }
}

TEST(FormatPrometheusTimeTest, TruncatesBelowMilliseconds) {
  const auto at = Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(1700000000123999)));
  EXPECT_EQ(formatPrometheusTime(at), "1700000000.123");
}

// query_range's step: seconds with three decimals, like times.
TEST(FormatPrometheusSecondsTest, StepsInSecondsWithThreeDecimals) {
  EXPECT_EQ(formatPrometheusSeconds(milliseconds(60000)), "60.000");
  EXPECT_EQ(formatPrometheusSeconds(milliseconds(15000)), "15.000");
  EXPECT_EQ(formatPrometheusSeconds(milliseconds(250)), "0.250");
  EXPECT_EQ(formatPrometheusSeconds(milliseconds(1)), "0.001");
  EXPECT_EQ(formatPrometheusSeconds(milliseconds(86400001)), "86400.001");
  EXPECT_EQ(formatPrometheusSeconds(milliseconds(0)), "0.000");
}

TEST(FormatPrometheusDurationTest, WholeSecondsOrMilliseconds) {
  EXPECT_EQ(formatPrometheusDuration(milliseconds(5000)), "5s");
  EXPECT_EQ(formatPrometheusDuration(milliseconds(1500)), "1500ms");
  EXPECT_EQ(formatPrometheusDuration(milliseconds(300)), "300ms");
  EXPECT_EQ(formatPrometheusDuration(milliseconds(120000)), "120s");
}

TEST(ParseBaseUrlTest, SplitsOriginPrefixAndQuery) {
  struct Case {
    std::string url;
    std::string origin;
    std::string prefix;
    std::string query;
  };
  const Case cases[] = {
      {"http://x/prom/", "http://x", "/prom", ""},
      {"http://x/prom", "http://x", "/prom", ""},
      {"http://127.0.0.1:9090", "http://127.0.0.1:9090", "", ""},
      {"https://thanos:10902/?dedup=true&partial_response=false", "https://thanos:10902", "",
       "dedup=true&partial_response=false"},
      {"https://x/a/b/?tenant=t%201", "https://x", "/a/b", "tenant=t%201"},
      {"HTTP://x/", "http://x", "", ""},
  };
  for (const auto& c : cases) {
    const BaseUrl base = parseBaseUrl(c.url);
    EXPECT_EQ(base.origin, c.origin) << c.url;
    EXPECT_EQ(base.path_prefix, c.prefix) << c.url;
    EXPECT_EQ(base.query, c.query) << c.url;
  }
}

TEST(ParseBaseUrlTest, RejectsUnusableUrlsNamingTheFlag) {
  for (const std::string url :
       {"ftp://x/", "not a url", "http://user:secret@x/", "localhost:9090", "http:///path"}) {
    try {
      parseBaseUrl(url);
      ADD_FAILURE() << url << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--prometheus-url"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseVerbTest, AcceptsGetAndPostOnly) {
  EXPECT_EQ(parseVerb("GET"), Verb::kGet);
  EXPECT_EQ(parseVerb("post"), Verb::kPost);
  try {
    parseVerb("PUT");
    ADD_FAILURE() << "PUT was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--prometheus-verb"), std::string::npos);
  }
}

TEST(BuildRequestTest, GetPutsBaseQueryThenParametersInTheTarget) {
  const BaseUrl base = parseBaseUrl("http://x/prom/?dedup=true");
  const HttpRequestSpec spec =
      buildRequest(base, "/api/v1/query", {{"query", "up"}, {"time", "1.000"}}, Verb::kGet, 2048);
  EXPECT_EQ(spec.verb, Verb::kGet);
  EXPECT_EQ(spec.target, "/prom/api/v1/query?dedup=true&query=up&time=1.000");
  EXPECT_EQ(spec.body, "");
}

TEST(BuildRequestTest, PostKeepsBaseQueryInTheTargetAndParametersInTheBody) {
  const BaseUrl base = parseBaseUrl("http://x/prom/?dedup=true");
  const HttpRequestSpec spec =
      buildRequest(base, "/api/v1/query", {{"query", "up"}}, Verb::kPost, 2048);
  EXPECT_EQ(spec.verb, Verb::kPost);
  EXPECT_EQ(spec.target, "/prom/api/v1/query?dedup=true");
  EXPECT_EQ(spec.body, "query=up");
}

TEST(BuildRequestTest, SwitchesToPostAboveTheThreshold) {
  const BaseUrl base = parseBaseUrl("http://x");
  // "query=" plus 10 characters is 16 encoded bytes.
  const Params params{{"query", std::string(10, 'a')}};
  EXPECT_EQ(buildRequest(base, "/api/v1/query", params, Verb::kGet, 16).verb, Verb::kGet);
  const HttpRequestSpec over = buildRequest(base, "/api/v1/query", params, Verb::kGet, 15);
  EXPECT_EQ(over.verb, Verb::kPost);
  EXPECT_EQ(over.target, "/api/v1/query");
  EXPECT_EQ(over.body, "query=aaaaaaaaaa");
}

}  // namespace
}  // namespace metrics_adapter::prometheus
