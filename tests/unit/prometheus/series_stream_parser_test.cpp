#include "prometheus/series_stream_parser.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace metrics_adapter::prometheus {
namespace {

using Kind = PrometheusError::Kind;

struct Seen {
  std::string name;
  std::vector<std::string> labels;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> parseAll(const std::string& body, SeriesAnswer* answer = nullptr) {
  std::vector<Seen> seen;
  std::istringstream in(body);
  const SeriesAnswer result = parseSeriesStream(
      in, [&](std::string_view name, const std::vector<std::string_view>& labels) {
        seen.push_back({std::string(name), {labels.begin(), labels.end()}});
      });
  if (answer != nullptr) *answer = result;
  return seen;
}

TEST(ParseSeriesStreamTest, PassesNamesAndLabelNamesInOrder) {
  SeriesAnswer answer;
  const auto seen = parseAll(R"({"status":"success","data":[)"
                             R"({"__name__":"http_requests_total","namespace":"ns","pod":"p-1"},)"
                             R"({"pod":"p-2","__name__":"up"},)"
                             R"({"__name__":"no_labels"}]})",
                             &answer);
  const std::vector<Seen> expected = {
      {"http_requests_total", {"namespace", "pod"}},
      {"up", {"pod"}},
      {"no_labels", {}},
  };
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(answer.series, 3u);
}

TEST(ParseSeriesStreamTest, SeriesWithoutNameHaveAnEmptyName) {
  EXPECT_EQ(parseAll(R"({"status":"success","data":[{"job":"x"}]})"),
            (std::vector<Seen>{{"", {"job"}}}));
}

TEST(ParseSeriesStreamTest, NullOrEmptyDataIsAnEmptyAnswer) {
  EXPECT_TRUE(parseAll(R"({"status":"success","data":null})").empty());
  EXPECT_TRUE(parseAll(R"({"status":"success","data":[]})").empty());
  EXPECT_TRUE(parseAll(R"({"status":"success"})").empty());
}

TEST(ParseSeriesStreamTest, WarningsAndUnknownMembersAreTolerated) {
  SeriesAnswer answer;
  const auto seen =
      parseAll(R"({"status":"success","infos":[{"x":[1,2]}],"warnings":["too many series"],)"
               R"("data":[{"__name__":"up"}],"extra":{"nested":{"data":[1]}}})",
               &answer);
  EXPECT_EQ(seen, (std::vector<Seen>{{"up", {}}}));
  EXPECT_EQ(answer.warnings, (std::vector<std::string>{"too many series"}));
}

TEST(ParseSeriesStreamTest, ErrorStatusIsAnApiError) {
  try {
    parseAll(
        R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"match[]\""})");
    FAIL() << "no exception";
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), Kind::kApiError);
    EXPECT_STREQ(e.what(), R"(bad_data: invalid parameter "match[]")");
  }
}

TEST(ParseSeriesStreamTest, MalformedAnswersAreBadResponses) {
  const std::string cases[] = {
      "",
      "[]",
      R"("success")",
      R"({"status":"success","data":[{"__name__":"up"},{"__name__":"do)",  // cut
      R"({"status":"success","data":{"__name__":"up"}})",                  // data not a list
      R"({"status":"success","data":"x"})",
      R"({"status":"success","data":["up"]})",  // series not object
      R"({"status":"success","data":[[1]]})",
      R"({"status":"success","data":[{"__name__":1}]})",  // value not string
      R"({"status":"success","data":[{"a":{"b":"c"}}]})",
      R"({"data":[]})",  // no status
      R"({"status":"pending","data":[]})",
      R"({"status":"success","data":[]} trailing)",
      std::string(100000, '[') + std::string(100000, ']'),
  };
  for (const auto& body : cases) {
    try {
      parseAll(body);
      ADD_FAILURE() << "accepted: " << body.substr(0, 120);
    } catch (const PrometheusError& e) {
      EXPECT_EQ(e.kind(), Kind::kBadResponse) << body.substr(0, 120) << ": " << e.what();
    }
  }
}

TEST(ParseSeriesStreamTest, DeepNestingInUnknownMembersIsSkippedWithoutRecursion) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(parseAll(R"({"status":"success","x":)" + deep + R"(,"data":[{"__name__":"up"}]})"),
            (std::vector<Seen>{{"up", {}}}));
}

TEST(ParseSeriesStreamTest, NestingBeyondAMillionLevelsIsABadResponse) {
  const std::string deep = std::string((1 << 20) + 1, '[');
  try {
    parseAll(R"({"status":"success","x":)" + deep);
    FAIL() << "accepted";
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), Kind::kBadResponse);
    EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
  }
}

TEST(ParseSeriesStreamTest, VisitorExceptionsPropagate) {
  std::istringstream in(R"({"status":"success","data":[{"__name__":"a"},{"__name__":"b"}]})");
  int calls = 0;
  EXPECT_THROW(parseSeriesStream(in,
                                 [&](std::string_view, const std::vector<std::string_view>&) {
                                   ++calls;
                                   throw std::logic_error("stop");
                                 }),
               std::logic_error);
  EXPECT_EQ(calls, 1);
}

TEST(ParseSeriesStreamTest, CallsTheTokenHookForEveryToken) {
  std::istringstream in(R"({"status":"success","data":[{"__name__":"a"}]})");
  int tokens = 0;
  parseSeriesStream(
      in, [](std::string_view, const std::vector<std::string_view>&) {}, [&] { ++tokens; });
  // { "status" "success" "data" [ { "__name__" "a" } ] } = 11 tokens.
  EXPECT_EQ(tokens, 11);
}

}  // namespace
}  // namespace metrics_adapter::prometheus
