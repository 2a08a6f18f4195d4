#include "prometheus/response_parsing.h"

#include <gtest/gtest.h>

#include <string>

namespace metrics_adapter::prometheus {
namespace {

TEST(SanitizeLineTest, MakesOnePrintableLine) {
  struct Case {
    std::string input;
    std::size_t max_bytes;
    std::string expected;
  };
  const Case cases[] = {
      {"plain text", 100, "plain text"},
      {"a\r\nb\tc", 100, "a b c"},  // control characters become one space
      {"a \n b", 100, "a  b"},      // real spaces are kept as they are
      {"\n\nlead and trail\n", 100, "lead and trail"},
      {"caf\xC3\xA9", 100, "caf\xC3\xA9"},        // valid UTF-8 is kept
      {"bad \xFF\xC3 byte", 100, "bad ?? byte"},  // invalid bytes become '?'
      {"\xED\xA0\x80", 100, "???"},               // a UTF-16 surrogate is not UTF-8
      {"abcdef", 3, "abc..."},
      {"ab\xC3\xA9", 3, "ab..."},  // never splits a character
      {"", 10, ""},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(sanitizeLine(c.input, c.max_bytes), c.expected) << c.input;
  }
}

TEST(ParseSampleValueTest, StrtodSemanticsOnTheWholeText) {
  EXPECT_EQ(parseSampleValue("1.5"), 1.5);
  EXPECT_EQ(parseSampleValue("-Inf"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(parseSampleValue("1e-3"), 0.001);
  EXPECT_EQ(parseSampleValue("0x10"), 16.0);  // strtod reads hex floats too
  EXPECT_EQ(parseSampleValue(""), std::nullopt);
  EXPECT_EQ(parseSampleValue("1,5"), std::nullopt);
  EXPECT_EQ(parseSampleValue("1.5 "), std::nullopt);
  EXPECT_EQ(parseSampleValue("\n1"), std::nullopt);
}

TEST(ErrorForHttpStatusTest, PrometheusErrorDocumentsWinOverTheStatus) {
  const PrometheusError error = errorForHttpStatus(
      422, R"({"status":"error","errorType":"execution","error":"many-to-many matching"})");
  EXPECT_EQ(error.kind(), PrometheusError::Kind::kApiError);
  EXPECT_EQ(error.httpStatus(), 422);
  EXPECT_STREQ(error.what(), "execution: many-to-many matching");
}

TEST(ErrorForHttpStatusTest, OtherBodiesAreQuotedBriefly) {
  const PrometheusError error = errorForHttpStatus(503, R"({"message":"no healthy upstream"})");
  EXPECT_EQ(error.kind(), PrometheusError::Kind::kHttpStatus);
  EXPECT_STREQ(error.what(),
               R"(unexpected HTTP status 503 from Prometheus: {"message":"no healthy upstream"})");
  EXPECT_STREQ(errorForHttpStatus(404, "").what(), "unexpected HTTP status 404 from Prometheus");
}

}  // namespace
}  // namespace metrics_adapter::prometheus
