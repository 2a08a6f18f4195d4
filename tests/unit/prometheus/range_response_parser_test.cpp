#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_client.h"
#include "unit/prometheus/sample_value_cases.h"

namespace metrics_adapter::prometheus {
namespace {

using Kind = PrometheusError::Kind;
using Labels = std::map<std::string, std::string>;

// Wraps a result in a Prometheus success envelope.
std::string rangeAnswer(const std::string& result, const std::string& type = "matrix") {
  return R"({"status":"success","data":{"resultType":")" + type + R"(","result":)" + result + "}}";
}

// The PrometheusError that parsing `body` throws.
PrometheusError rangeErrorOf(const std::string& body) {
  try {
    parseRangeResponse(body);
  } catch (const PrometheusError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body.substr(0, 120);
  return PrometheusError(Kind::kHttpStatus, -1, "none");
}

TEST(ParseRangeResponseTest, MatrixKeepsSeriesInOrderWithTheirPoints) {
  const RangeResult result = parseRangeResponse(rangeAnswer(
      R"([{"metric":{"__name__":"up","pod":"a"},"values":[[1700000000,"1"],[1700000060.5,"2.5"]]},)"
      R"({"metric":{"pod":"b"},"values":[[1700000060,"-3"]]}])"));
  ASSERT_EQ(result.series.size(), 2u);
  EXPECT_EQ(result.series[0].labels, (Labels{{"__name__", "up"}, {"pod", "a"}}));
  EXPECT_EQ(result.series[0].times, (std::vector<double>{1700000000, 1700000060.5}));
  EXPECT_EQ(result.series[0].values, (std::vector<double>{1, 2.5}));
  EXPECT_EQ(result.series[1].labels, (Labels{{"pod", "b"}}));
  EXPECT_EQ(result.series[1].times, std::vector<double>{1700000060});
  EXPECT_EQ(result.series[1].values, std::vector<double>{-3});
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_EQ(result.bad_samples, 0u);
}

TEST(ParseRangeResponseTest, SpecialAndHugeValuesAreKeptAsDoubles) {
  for (const auto& c : kSampleValueCases) {
    const RangeResult result =
        parseRangeResponse(rangeAnswer(R"([{"metric":{},"values":[[1,")" + c.text + R"("]]}])"));
    ASSERT_EQ(result.series.size(), 1u) << c.text;
    ASSERT_EQ(result.series[0].values.size(), 1u) << c.text;
    EXPECT_TRUE(isSampleValue(result.series[0].values[0], c));
  }
}

TEST(ParseRangeResponseTest, EmptyAndNullResultsHaveNoSeries) {
  EXPECT_TRUE(parseRangeResponse(rangeAnswer("[]")).series.empty());
  EXPECT_TRUE(parseRangeResponse(rangeAnswer("null")).series.empty());
  const RangeResult no_points = parseRangeResponse(rangeAnswer(R"([{"metric":{},"values":[]}])"));
  ASSERT_EQ(no_points.series.size(), 1u);
  EXPECT_TRUE(no_points.series[0].times.empty());
}

TEST(ParseRangeResponseTest, WarningsAreKept) {
  const RangeResult result =
      parseRangeResponse(R"({"status":"success","warnings":["partial data","second"],)"
                         R"("data":{"resultType":"matrix","result":[]}})");
  EXPECT_EQ(result.warnings, (std::vector<std::string>{"partial data", "second"}));
}

TEST(ParseRangeResponseTest, HistogramPointsAreSkipped) {
  const RangeResult result = parseRangeResponse(rangeAnswer(
      R"([{"metric":{"a":"h"},"histograms":[[1,{"count":"2","sum":"3","buckets":[]}]]},)"
      R"({"metric":{"a":"mixed"},"values":[[1,"4"]],"histograms":[[2,{"count":"1"}]]}])"));
  ASSERT_EQ(result.series.size(), 1u);
  EXPECT_EQ(result.series[0].labels.at("a"), "mixed");
  EXPECT_EQ(result.series[0].times, std::vector<double>{1});
  EXPECT_EQ(result.series[0].values, std::vector<double>{4});
}

TEST(ParseRangeResponseTest, PointsWithUnservableTimesAreLeftOutAndCounted) {
  const RangeResult result = parseRangeResponse(
      rangeAnswer(R"([{"metric":{"pod":"a"},"values":[[-1,"1"],[1700000000,"2"],[1e300,"3"]]},)"
                  R"({"metric":{"pod":"b"},"values":[[253402300800,"4"]]}])"));
  ASSERT_EQ(result.series.size(), 2u);
  EXPECT_EQ(result.series[0].times, std::vector<double>{1700000000});
  EXPECT_EQ(result.series[0].values, std::vector<double>{2});
  EXPECT_TRUE(result.series[1].times.empty());
  EXPECT_EQ(result.bad_samples, 3u);
}

TEST(ParseRangeResponseTest, MembersMayComeInAnyOrderAndRepeatedOnesReplaceEarlierOnes) {
  const RangeResult result = parseRangeResponse(
      R"({"data":{"result":[{"values":[[1,"9"]],"values":[[2,"7"]],"metric":{"pod":"a","pod":"b"}}],)"
      R"("stats":{"timings":{}},"resultType":"matrix"},"infos":["i"],"status":"success"})");
  ASSERT_EQ(result.series.size(), 1u);
  EXPECT_EQ(result.series[0].labels, (Labels{{"pod", "b"}}));
  EXPECT_EQ(result.series[0].times, std::vector<double>{2});
  EXPECT_EQ(result.series[0].values, std::vector<double>{7});
}

TEST(ParseRangeResponseTest, LabelValuesAreUnescapedAndNullMetricHasNoLabels) {
  const RangeResult result = parseRangeResponse(
      rangeAnswer(R"([{"metric":{"a\u0062":"q\"\\\n\u00e9"},"values":[[1,"1"]]},)"
                  R"({"metric":null,"values":[[1,"1"]]}])"));
  ASSERT_EQ(result.series.size(), 2u);
  EXPECT_EQ(result.series[0].labels, (Labels{{"ab", "q\"\\\n\xc3\xa9"}}));
  EXPECT_TRUE(result.series[1].labels.empty());
}

TEST(ParseRangeResponseTest, ErrorStatusBecomesApiErrorWithPrometheusText) {
  const PrometheusError error = rangeErrorOf(
      R"({"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of )"
      R"x(11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"})x");
  EXPECT_EQ(error.kind(), Kind::kApiError);
  EXPECT_STREQ(error.what(),
               "bad_data: exceeded maximum resolution of 11,000 points per timeseries. Try "
               "decreasing the query resolution (?step=XX)");
  // An error answer wins over a malformed data member.
  EXPECT_EQ(rangeErrorOf(R"({"data":{"resultType":"vector","result":7},"status":"error"})").kind(),
            Kind::kApiError);
}

TEST(ParseRangeResponseTest, ResultTypesOtherThanMatrixAreBadResponsesNamingTheType) {
  const std::pair<std::string, std::string> cases[] = {
      {"vector", R"([{"metric":{},"value":[1,"1"]}])"},
      {"scalar", R"([1,"1"])"},
      {"string", R"([1,"x"])"},
      {"table", "[]"},
  };
  for (const auto& [type, result] : cases) {
    const PrometheusError error = rangeErrorOf(rangeAnswer(result, type));
    EXPECT_EQ(error.kind(), Kind::kBadResponse) << type;
    EXPECT_NE(std::string(error.what()).find("resultType \"" + type + "\""), std::string::npos)
        << error.what();
  }
}

TEST(ParseRangeResponseTest, MalformedAnswersAreBadResponses) {
  const std::string good = rangeAnswer(R"([{"metric":{"pod":"a"},"values":[[1,"1"],[2,"2"]]}])");
  const std::string cases[] = {
      "",
      "not json",
      "[]",
      good.substr(0, good.size() - 1),                                     // cut at the end
      good.substr(0, 70),                                                  // cut in a point
      good + "x",                                                          // trailing junk
      R"({"data":{"resultType":"matrix","result":[]}})",                   // no status
      R"({"status":"weird","data":{"resultType":"matrix","result":[]}})",  // unknown status
      R"({"status":"success"})",                                           // no data
      R"({"status":"success","data":{"result":[]}})",                      // no resultType
      R"({"status":"success","data":{"resultType":"matrix"}})",            // no result
      rangeAnswer(R"({"metric":{}})"),                                     // result not a list
      rangeAnswer(R"([[1,"1"]])"),                                         // series a list
      rangeAnswer(R"([{"metric":{}}])"),                                   // no values
      rangeAnswer(R"([{"metric":{},"values":"1"}])"),                      // values not a list
      rangeAnswer(R"([{"metric":{},"values":[1,"1"]}])"),                  // values one pair
      rangeAnswer(R"([{"metric":{},"values":[[1,1.5]]}])"),                // number value
      rangeAnswer(R"([{"metric":{},"values":[[1,"abc"]]}])"),              // not a number
      rangeAnswer(R"([{"metric":{},"values":[[1," 1"]]}])"),               // leading blank
      rangeAnswer(R"([{"metric":{},"values":[["1","1"]]}])"),              // time not number
      rangeAnswer(R"([{"metric":{},"values":[[1]]}])"),                    // short pair
      rangeAnswer(R"([{"metric":{},"values":[[1,"1",2]]}])"),              // long pair
      rangeAnswer(R"([{"metric":{},"values":[[1e999,"1"]]}])"),            // time overflows
      rangeAnswer(R"([{"metric":{"a":1},"values":[[1,"1"]]}])"),           // label not string
      rangeAnswer(R"([{"metric":[],"values":[[1,"1"]]}])"),                // labels not object
      rangeAnswer(R"([{"values":[[1,"1"]]},{"values":[[1,"x"]]}])"),       // second series bad
      std::string(100000, '[') + std::string(100000, ']'),                 // hostile nesting
  };
  for (const auto& body : cases) {
    EXPECT_EQ(rangeErrorOf(body).kind(), Kind::kBadResponse) << body.substr(0, 120);
  }
}

// One series of 11,000 points, the most Prometheus answers per series, decodes point for point.
TEST(ParseRangeResponseTest, ALongSeriesDecodesEveryPoint) {
  std::string values;
  for (int i = 0; i < 11000; ++i) {
    if (i > 0) values += ",";
    values += "[" + std::to_string(1700000000 + i * 60) + ",\"" + std::to_string(i) + "\"]";
  }
  const RangeResult result =
      parseRangeResponse(rangeAnswer(R"([{"metric":{"pod":"a"},"values":[)" + values + "]}]"));
  ASSERT_EQ(result.series.size(), 1u);
  ASSERT_EQ(result.series[0].values.size(), 11000u);
  EXPECT_EQ(result.series[0].times.back(), 1700000000.0 + 10999 * 60);
  EXPECT_EQ(result.series[0].values.back(), 10999);
}

}  // namespace
}  // namespace metrics_adapter::prometheus
