#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_client.h"
#include "unit/prometheus/sample_value_cases.h"

namespace metrics_adapter::prometheus {
namespace {

using Kind = PrometheusError::Kind;

// Wraps a result in a Prometheus success envelope.
std::string answer(const std::string& type, const std::string& result) {
  return R"({"status":"success","data":{"resultType":")" + type + R"(","result":)" + result + "}}";
}

TEST(ParseQueryResponseTest, VectorKeepsLabelsValuesAndTimestamps) {
  const QueryResult result = parseQueryResponse(
      answer("vector", R"([{"metric":{"__name__":"up","pod":"a"},"value":[1700000000.5,"1.5"]},)"
                       R"({"metric":{"pod":"b"},"value":[1700000001,"-2"]}])"));
  EXPECT_EQ(result.type, QueryResult::Type::kVector);
  ASSERT_EQ(result.samples.size(), 2u);
  EXPECT_EQ(result.samples[0].labels,
            (std::map<std::string, std::string>{{"__name__", "up"}, {"pod", "a"}}));
  EXPECT_DOUBLE_EQ(result.samples[0].value, 1.5);
  EXPECT_DOUBLE_EQ(result.samples[0].timestamp, 1700000000.5);
  EXPECT_EQ(result.samples[1].labels, (std::map<std::string, std::string>{{"pod", "b"}}));
  EXPECT_DOUBLE_EQ(result.samples[1].value, -2);
  EXPECT_TRUE(result.warnings.empty());
}

TEST(ParseQueryResponseTest, SpecialValuesAreKeptAsDoubles) {
  for (const auto& c : kSampleValueCases) {
    const QueryResult result =
        parseQueryResponse(answer("vector", R"([{"metric":{},"value":[1,")" + c.text + R"("]}])"));
    ASSERT_EQ(result.samples.size(), 1u) << c.text;
    EXPECT_TRUE(isSampleValue(result.samples[0].value, c));
  }
}

// Times no time_t can hold (undefined behaviour to convert), before 1970 or after 9999 make a
// bad sample: left out and counted, while the answer's other samples are served.
TEST(ParseQueryResponseTest, SamplesWithTimesOutsideTheServableRangeAreLeftOutAndCounted) {
  struct Case {
    std::string time;  // JSON number text
    bool servable;
  };
  const std::vector<Case> cases = {
      {"0", true},
      {"1700000000.123", true},
      {"253402300799", true},  // 9999-12-31T23:59:59Z
      {"253402300800", false},
      {"1e300", false},
      {"-1e300", false},
      {"1.7976931348623157e308", false},  // the largest double
      {"-1.7976931348623157e308", false},
      {"-0.5", false},
      {"9223372036854775807", false},
      {"-9223372036854775808", false},
      {"99999999999999999999999", false},
  };
  for (const auto& c : cases) {
    const QueryResult vector = parseQueryResponse(
        answer("vector", R"([{"metric":{"pod":"bad"},"value":[)" + c.time +
                             R"(,"1"]},{"metric":{"pod":"good"},"value":[1700000000,"2"]}])"));
    ASSERT_EQ(vector.samples.size(), c.servable ? 2u : 1u) << c.time;
    EXPECT_EQ(vector.bad_samples, c.servable ? 0u : 1u) << c.time;
    EXPECT_EQ(vector.samples.back().labels.at("pod"), "good") << c.time;

    const QueryResult scalar = parseQueryResponse(answer("scalar", "[" + c.time + R"(,"1"])"));
    EXPECT_EQ(scalar.type, QueryResult::Type::kScalar);
    EXPECT_EQ(scalar.samples.size(), c.servable ? 1u : 0u) << c.time;
    EXPECT_EQ(scalar.bad_samples, c.servable ? 0u : 1u) << c.time;
  }
}

// JSON has no NaN or infinity, and a number too large for a double is undecodable: the answer
// fails as a whole rather than turning into an infinite time.
TEST(ParseQueryResponseTest, TimesTooLargeForADoubleAreUndecodable) {
  for (const std::string time : {"1e999", "-1e999"}) {
    try {
      parseQueryResponse(answer("vector", R"([{"metric":{},"value":[)" + time + R"(,"1"]}])"));
      ADD_FAILURE() << time;
    } catch (const PrometheusError& e) {
      EXPECT_EQ(e.kind(), Kind::kBadResponse) << time;
    }
  }
}

TEST(SampleTimeTest, OnlyTimesFromTheEpochToTheYear9999AreServable) {
  EXPECT_TRUE(isServableSampleTime(0));
  EXPECT_TRUE(isServableSampleTime(kMaxSampleTime));
  EXPECT_FALSE(isServableSampleTime(std::nextafter(kMaxSampleTime, 1e300)));
  EXPECT_FALSE(isServableSampleTime(-std::numeric_limits<double>::denorm_min()));
  EXPECT_FALSE(isServableSampleTime(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(isServableSampleTime(std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(isServableSampleTime(-std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(isServableSampleTime(std::numeric_limits<double>::max()));
}

TEST(ParseQueryResponseTest, ScalarIsOneSampleWithoutLabels) {
  const QueryResult result = parseQueryResponse(answer("scalar", R"([1700000000.123,"42"])"));
  EXPECT_EQ(result.type, QueryResult::Type::kScalar);
  ASSERT_EQ(result.samples.size(), 1u);
  EXPECT_TRUE(result.samples[0].labels.empty());
  EXPECT_DOUBLE_EQ(result.samples[0].value, 42);
  EXPECT_DOUBLE_EQ(result.samples[0].timestamp, 1700000000.123);
}

TEST(ParseQueryResponseTest, MatrixAndStringOnlySetTheType) {
  const QueryResult matrix =
      parseQueryResponse(answer("matrix", R"([{"metric":{"a":"b"},"values":[[1,"1"],[2,"2"]]}])"));
  EXPECT_EQ(matrix.type, QueryResult::Type::kMatrix);
  EXPECT_TRUE(matrix.samples.empty());
  const QueryResult text = parseQueryResponse(answer("string", R"([1,"hello"])"));
  EXPECT_EQ(text.type, QueryResult::Type::kString);
  EXPECT_TRUE(text.samples.empty());
}

TEST(ParseQueryResponseTest, EmptyAndNullVectors) {
  EXPECT_TRUE(parseQueryResponse(answer("vector", "[]")).samples.empty());
  EXPECT_TRUE(parseQueryResponse(answer("vector", "null")).samples.empty());
}

TEST(ParseQueryResponseTest, WarningsAreReturned) {
  const QueryResult result =
      parseQueryResponse(R"({"status":"success","data":{"resultType":"vector","result":[]},)"
                         R"("warnings":["PromQL info: partial data","second"]})");
  EXPECT_EQ(result.warnings, (std::vector<std::string>{"PromQL info: partial data", "second"}));
}

TEST(ParseQueryResponseTest, NativeHistogramSamplesAreLeftOut) {
  const QueryResult result =
      parseQueryResponse(answer("vector", R"([{"metric":{"a":"h"},"histogram":[1,{"count":"2"}]},)"
                                          R"({"metric":{"a":"f"},"value":[1,"3"]}])"));
  ASSERT_EQ(result.samples.size(), 1u);
  EXPECT_EQ(result.samples[0].labels.at("a"), "f");
}

TEST(ParseQueryResponseTest, ErrorStatusBecomesApiErrorWithPrometheusText) {
  try {
    parseQueryResponse(
        R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""})");
    FAIL() << "no exception";
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), Kind::kApiError);
    EXPECT_STREQ(e.what(), R"(bad_data: 1:5: parse error: unexpected "}")");
  }
}

TEST(ParseQueryResponseTest, MembersMayComeInAnyOrder) {
  const QueryResult vector = parseQueryResponse(
      R"({"data":{"result":[{"value":[1,"7"],"metric":{"pod":"a"}}],"resultType":"vector"},)"
      R"("warnings":["w"],"status":"success"})");
  EXPECT_EQ(vector.type, QueryResult::Type::kVector);
  ASSERT_EQ(vector.samples.size(), 1u);
  EXPECT_EQ(vector.samples[0].labels, (std::map<std::string, std::string>{{"pod", "a"}}));
  EXPECT_DOUBLE_EQ(vector.samples[0].value, 7);
  EXPECT_EQ(vector.warnings, std::vector<std::string>{"w"});

  const QueryResult scalar =
      parseQueryResponse(R"({"data":{"result":[5,"3"],"resultType":"scalar"},"status":"success"})");
  EXPECT_EQ(scalar.type, QueryResult::Type::kScalar);
  ASSERT_EQ(scalar.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(scalar.samples[0].value, 3);
  EXPECT_DOUBLE_EQ(scalar.samples[0].timestamp, 5);
}

TEST(ParseQueryResponseTest, UnknownMembersAreIgnoredAndRepeatedOnesReplaceEarlierOnes) {
  const QueryResult result = parseQueryResponse(
      R"({"status":"success","infos":[{"x":[1,2]}],"data":{"resultType":"vector","stats":{},)"
      R"("result":[{"metric":{"pod":"a","pod":"b"},"value":[1,"1"],"value":[2,"2"],)"
      R"("exemplars":[{"value":"9"}]}]}})");
  ASSERT_EQ(result.samples.size(), 1u);
  EXPECT_EQ(result.samples[0].labels, (std::map<std::string, std::string>{{"pod", "b"}}));
  EXPECT_DOUBLE_EQ(result.samples[0].value, 2);
  EXPECT_DOUBLE_EQ(result.samples[0].timestamp, 2);
}

TEST(ParseQueryResponseTest, NullMetricMeansNoLabels) {
  const QueryResult result =
      parseQueryResponse(answer("vector", R"([{"metric":null,"value":[1,"1"]}])"));
  ASSERT_EQ(result.samples.size(), 1u);
  EXPECT_TRUE(result.samples[0].labels.empty());
}

TEST(ParseQueryResponseTest, LabelValuesAreUnescaped) {
  const QueryResult result = parseQueryResponse(
      answer("vector", R"([{"metric":{"a\u0062":"q\"\\\n\u00e9\ud83d\ude00"},"value":[1,"1"]}])"));
  ASSERT_EQ(result.samples.size(), 1u);
  EXPECT_EQ(result.samples[0].labels,
            (std::map<std::string, std::string>{{"ab", "q\"\\\n\xc3\xa9\xf0\x9f\x98\x80"}}));
}

TEST(ParseQueryResponseTest, DcgmBlankSentinelsAreKept) {
  const std::pair<std::string, double> cases[] = {
      {"9223372036854775792", 9223372036854775792.0},
      {"9223372036854775807", 9223372036854775807.0},
      {"2147483647", 2147483647.0},
  };
  for (const auto& [text, expected] : cases) {
    const QueryResult result =
        parseQueryResponse(answer("vector", R"([{"value":[1,")" + text + R"("]}])"));
    ASSERT_EQ(result.samples.size(), 1u) << text;
    EXPECT_EQ(result.samples[0].value, expected) << text;
  }
}

TEST(ParseQueryResponseTest, ErrorStatusWinsOverAMalformedData) {
  try {
    parseQueryResponse(R"({"data":{"resultType":"table","result":7},"error":"too many samples",)"
                       R"("status":"error"})");
    FAIL() << "no exception";
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), Kind::kApiError);
    EXPECT_STREQ(e.what(), "too many samples");
  }
}

TEST(ParseQueryResponseTest, NestingIsBoundedAtSixtyFourLevels) {
  // The answer object is one level; an ignored member adds the rest.
  const auto nested = [](int levels) {
    return R"({"status":"success","data":{"resultType":"vector","result":[]},"x":)" +
           std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}";
  };
  EXPECT_NO_THROW(parseQueryResponse(nested(64)));
  try {
    parseQueryResponse(nested(70));
    FAIL() << "no exception";
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), Kind::kBadResponse);
    EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos)
        << e.what();
  }
}

TEST(ParseQueryResponseTest, MalformedAnswersAreBadResponses) {
  const std::string cases[] = {
      "",
      "not json",
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"val)",  // cut
      "[]",
      R"({"data":{"resultType":"vector","result":[]}})",                     // no status
      R"({"status":"weird","data":{"resultType":"vector","result":[]}})",    // unknown status
      R"({"status":"success"})",                                             // no data
      R"({"status":"success","data":{"result":[]}})",                        // no resultType
      R"({"status":"success","data":{"resultType":"table","result":[]}})",   // unknown type
      answer("vector", R"({"metric":{}})"),                                  // not a list
      answer("vector", R"([{"metric":{}}])"),                                // no value
      answer("vector", R"([{"metric":{},"value":[1,1.5]}])"),                // number value
      answer("vector", R"([{"metric":{},"value":[1,"abc"]}])"),              // not a number
      answer("vector", R"([{"metric":{},"value":[1," 1"]}])"),               // leading blank
      answer("vector", R"([{"metric":{},"value":[1,"1x"]}])"),               // trailing junk
      answer("vector", R"([{"metric":{"a":1},"value":[1,"1"]}])"),           // label not string
      answer("vector", R"([{"metric":{},"value":["1","1"]}])"),              // time not number
      answer("vector", R"([{"metric":{},"value":[1]}])"),                    // short pair
      answer("scalar", R"("1")"),                                            // scalar not pair
      answer("scalar", "null"),                                              // scalar null
      answer("scalar", R"([1,"2",3])"),                                      // long pair
      answer("vector", R"([{"metric":{},"value":[1,"1",2]}])"),              // long pair
      answer("vector", R"([{"metric":{},"value":"1"}])"),                    // value not a list
      answer("vector", R"([{"metric":[],"value":[1,"1"]}])"),                // labels not object
      answer("vector", R"([{"metric":{"a":{}},"value":[1,"1"]}])"),          // label an object
      answer("vector", R"([[1,"1"]])"),                                      // element a list
      answer("vector", R"([{"value":[1,"1"]},{"value":[1,"x"]}])"),          // second bad
      answer("vector", R"("[]")"),                                           // result a string
      R"({"status":"success","data":[]})",                                   // data not object
      R"({"status":"success","data":{"resultType":"vector"}})",              // no result
      R"({"status":7,"data":{"resultType":"vector","result":[]}})",          // status not text
      answer("vector", "[]") + "x",                                          // trailing junk
      answer("vector", R"([{"metric":{},"value":[1,"1"]}])").substr(0, 60),  // cut in element
      std::string(100000, '[') + std::string(100000, ']'),                   // hostile nesting
  };
  for (const auto& body : cases) {
    try {
      parseQueryResponse(body);
      ADD_FAILURE() << "accepted: " << body.substr(0, 120);
    } catch (const PrometheusError& e) {
      EXPECT_EQ(e.kind(), Kind::kBadResponse) << body.substr(0, 120) << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace metrics_adapter::prometheus
