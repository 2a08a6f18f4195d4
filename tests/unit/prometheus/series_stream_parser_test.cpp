#include "prometheus/series_stream_parser.h"

#include <gtest/gtest.h>

#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "seen_series.h"

namespace metrics_adapter::prometheus {
namespace {

using Kind = PrometheusError::Kind;

std::vector<Seen> parseAll(const std::string& body, SeriesAnswer* answer = nullptr) {
  std::vector<Seen> seen;
  std::istringstream in(body);
  const SeriesAnswer result = parseSeriesStream(in, collectInto(seen));
  if (answer != nullptr) *answer = result;
  return seen;
}

// Hands its pieces out one underflow at a time, as the body reader hands out network chunks.
class PiecesBuf final : public std::streambuf {
 public:
  explicit PiecesBuf(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {}

 protected:
  int_type underflow() override {
    while (next_ < pieces_.size() && pieces_[next_].empty()) ++next_;
    if (next_ == pieces_.size()) return traits_type::eof();
    std::string& piece = pieces_[next_++];
    setg(piece.data(), piece.data(), piece.data() + piece.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::vector<std::string> pieces_;
  std::size_t next_ = 0;
};

struct Outcome {
  std::vector<Seen> seen;
  SeriesAnswer answer;
  int tokens = 0;
  std::string error;  // what() when it threw
};

Outcome parsePieces(std::vector<std::string> pieces) {
  PiecesBuf buffer(std::move(pieces));
  std::istream in(&buffer);
  Outcome outcome;
  try {
    outcome.answer = parseSeriesStream(in, collectInto(outcome.seen), [&] { ++outcome.tokens; });
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), Kind::kBadResponse) << e.what();
    outcome.error = e.what();
  }
  return outcome;
}

void expectSameOutcome(const Outcome& actual, const Outcome& expected, const std::string& how) {
  EXPECT_EQ(actual.seen, expected.seen) << how;
  EXPECT_EQ(actual.answer.series, expected.answer.series) << how;
  EXPECT_EQ(actual.answer.warnings, expected.answer.warnings) << how;
  EXPECT_EQ(actual.tokens, expected.tokens) << how;
  EXPECT_EQ(actual.error, expected.error) << how;
}

// Every cut into two pieces, and one byte per piece, gives what one piece gives.
void expectSplitsDoNotMatter(const std::string& body) {
  const Outcome whole = parsePieces({body});
  for (std::size_t cut = 0; cut <= body.size(); ++cut) {
    expectSameOutcome(parsePieces({body.substr(0, cut), body.substr(cut)}), whole,
                      "cut at " + std::to_string(cut));
  }
  std::vector<std::string> bytes;
  for (char c : body) bytes.emplace_back(1, c);
  expectSameOutcome(parsePieces(bytes), whole, "one byte per piece");
}

TEST(ParseSeriesStreamTest, SplittingARealisticAnswerAnywhereChangesNothing) {
  const std::vector<Seen> served = {
      {"DCGM_FI_DEV_GPU_UTIL", {"Hostname", "UUID", "namespace", "pod"}},
      {"caf\xC3\xA9_\"quoted\"_\xF0\x9F\x98\x80", {"slash/name", "tab\tname"}},
      {"up", {}},
  };
  const std::string body =
      "{\n  \"status\" : \"success\",\n  \"data\" : [\n"
      R"(    {"__name__":"DCGM_FI_DEV_GPU_UTIL","Hostname":"gpu-node-1",)"
      R"("UUID":"GPU-\u0041b\"c","namespace":"ns-\ud83d\ude00","pod":"p\\1"},)"
      "\n"
      R"(    { "slash\/name" : "x" , "__name__" : "caf\u00e9_\"quoted\"_\ud83d\ude00",)"
      R"( "tab\tname":"\u20ac\n"},)"
      "\n"
      R"(    {"__name__":"up"})"
      "\n  ],\n"
      R"(  "warnings": ["too \"many\" series", 5, {"x": [true, null, -1.5e3]}],)"
      R"(  "infos": {"a": [[], {}]})"
      "\n}\n";
  const Outcome whole = parsePieces({body});
  ASSERT_EQ(whole.error, "");
  EXPECT_EQ(whole.seen, served);
  EXPECT_EQ(whole.answer.series, served.size());
  EXPECT_EQ(whole.answer.warnings, (std::vector<std::string>{R"(too "many" series)"}));
  expectSplitsDoNotMatter(body);
}

TEST(ParseSeriesStreamTest, SplittingABrokenAnswerAnywhereGivesTheSameError) {
  const std::string broken[] = {
      R"({"status":"success","data":[{"__name__":"a\u00e9","pod":"\ud83d\u0041"}]})",
      R"({"status":"success","data":[{"__name__":"up","pod":"x"},{"pod":tru}]})",
      R"({"status":"success","data":[{"__name__":"up"}],"x":[1.]})",
      R"({"status":"success","data":[{"__name__":"up"}]} {})",
      R"({"status":"success","data":[{"__name__":"up"})",
  };
  for (const auto& body : broken) {
    const Outcome whole = parsePieces({body});
    EXPECT_NE(whole.error, "") << body;
    expectSplitsDoNotMatter(body);
  }
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
