#include "prometheus/series_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seen_series.h"

namespace metrics_adapter::prometheus {
namespace {

using Kind = PrometheusError::Kind;

// Feeds `body` in pieces of `piece` bytes (all of it at once when 0).
std::vector<Seen> scan(std::string_view body, std::size_t piece = 0) {
  std::vector<Seen> seen;
  const SeriesVisitor visitor = collectInto(seen);
  const std::function<void()> no_hook;
  SeriesScanner scanner(visitor, no_hook);
  if (piece == 0) piece = body.size() + 1;
  for (std::size_t at = 0; at < body.size(); at += piece) scanner.feed(body.substr(at, piece));
  scanner.finish();
  return seen;
}

std::string answerWith(std::string_view series) {
  return R"({"status":"success","data":[)" + std::string(series) + "]}";
}

// Throws unless every way of cutting `body` into pieces of one size is rejected the same way.
std::string rejection(const std::string& body) {
  std::string first;
  for (std::size_t piece : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    try {
      scan(body, piece);
      ADD_FAILURE() << "accepted in pieces of " << piece << ": " << body;
      return "";
    } catch (const PrometheusError& e) {
      EXPECT_EQ(e.kind(), Kind::kBadResponse) << body;
      if (first.empty()) first = e.what();
      EXPECT_EQ(e.what(), first) << "pieces of " << piece << ": " << body;
    }
  }
  return first;
}

TEST(SeriesScannerTest, DecodesEveryEscapeInNames) {
  const std::string body = answerWith(
      R"({"__name__":"a\"b\\c\/d\be\ff\ng\rh\ti","l\u00e9\u20ac\ud83d\ude00":"v","z\u0000":"v"})");
  const std::vector<Seen> expected = {
      {"a\"b\\c/d\be\ff\ng\rh\ti",
       {"l\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", std::string("z\0", 2)}}};
  for (std::size_t piece = 0; piece <= 7; ++piece) {
    EXPECT_EQ(scan(body, piece), expected) << "pieces of " << piece;
  }
}

TEST(SeriesScannerTest, PassesRawUtf8Through) {
  const std::string name = "m\xC3\xA9tric_\xE2\x82\xAC_\xF0\x9F\x98\x80";
  const std::string body =
      answerWith(R"({"__name__":")" + name + "\",\"\xC3\xA9\":\"\xE2\x82\xAC\"}");
  for (std::size_t piece = 0; piece <= 3; ++piece) {
    EXPECT_EQ(scan(body, piece), (std::vector<Seen>{{name, {"\xC3\xA9"}}}));
  }
}

TEST(SeriesScannerTest, ChecksLabelValuesItDoesNotKeep) {
  // Label values are skipped, not trusted: each is invalid JSON in its own way.
  const std::string bad_values[] = {
      R"("\x")",
      R"("\u12G4")",
      R"("\ud83d")",
      R"("\ud83d\u0041")",
      R"("\ude00")",
      R"("\ud83dx")",
      "\"a\nb\"",
      "\"\x01\"",
      "\"\xC0\x80\"",
      "\"\xED\xA0\x80\"",
      "\"\xF5\x80\x80\x80\"",
      "\"\xE2\x82\"",
      "\"\x80\"",
      "\"\xF4\x90\x80\x80\"",
  };
  for (const auto& value : bad_values) {
    const std::string message = rejection(answerWith(R"({"__name__":"up","job":)" + value + "}"));
    EXPECT_NE(message.find("cannot decode"), std::string::npos) << value << ": " << message;
  }
}

TEST(SeriesScannerTest, AcceptsAndSkipsAnyValidJsonInUnknownMembers) {
  const std::string unknown =
      R"({"n":[0,-0,12,-1.5,2e3,1.25E+10,0e-2,-0.0e0],"l":[true,false,null],)"
      R"("o":{},"a":[],"s":"\"\\","deep":[[{"x":[{}]}]]})";
  const std::string body = " \t\r\n{ \"extra\" : " + unknown +
                           " , \"status\" : \"success\" , \"data\" : [ { \"__name__\" : \"up\" "
                           ", \"job\" : \"j\" } ] , \"more\" : -7 } \n";
  for (std::size_t piece = 0; piece <= 5; ++piece) {
    EXPECT_EQ(scan(body, piece), (std::vector<Seen>{{"up", {"job"}}})) << "pieces of " << piece;
  }
}

TEST(SeriesScannerTest, RejectsInvalidJson) {
  const std::string bad_members[] = {
      "01",    "1.",    "-",          "1e",    "1e+", ".5",      "+1",        "tru",
      "nul",   "True",  "[1,]",       "[,1]",  "{,}", "{\"a\"}", "{\"a\" 1}", "{\"a\":1,}",
      "[1 2]", "{1:2}", "[\"a\":1]",  "\"abc", "[}",  "{]",      "nulll",     "-a",
      "1.e5",  "0x10",  "\"a\"\"b\"", "[1]]",  "'a'", "[01]",    "\"\\u00\"", "truefalse",
  };
  for (const auto& member : bad_members) {
    rejection(R"({"status":"success","x":)" + member + R"(,"data":[]})");
  }
  const std::string bad_documents[] = {
      "",
      "   ",
      R"({"status":"success","data":[]})"
      "x",
      R"({"status":"success","data":[]}{})",
      R"({"status":"success","data":[]})" + std::string(1, '\0'),
      R"({"status":"success","data":[])",
      R"({"status":"success","data":[{"__name__":"up")",
      R"({"status":"success","data":[{"__name__":"u)",
      R"({"status":"success","data":[{"__name__":"u\)",
      R"({"status":"success","data":[{"__name__":"\ud83d)",
      R"({"status":"success","data":[{"__name__":"up"}],"x":1)",
      R"({"status":"success","data":[],"x":tr)",
      R"({"status":"success","data":[],"x":-)",
  };
  for (const auto& document : bad_documents) rejection(document);
}

TEST(SeriesScannerTest, ErrorsNameTheirByteOffsetAcrossPieces) {
  const std::string body = answerWith(R"({"__name__":"up","job":"a\qb"})");
  const std::string message = rejection(body);
  const std::size_t offset = body.find("\\q") + 1;
  EXPECT_NE(message.find("at byte " + std::to_string(offset)), std::string::npos) << message;
}

TEST(SeriesScannerTest, ReusesNoTextFromThePreviousSeries) {
  const std::string body =
      answerWith(R"({"__name__":"long_metric_name","namespace":"n","pod":"p"},{"pod":"q"},)"
                 R"({"__name__":"b","x":"1","__name__":"c"})");
  const std::vector<Seen> expected = {
      {"long_metric_name", {"namespace", "pod"}}, {"", {"pod"}}, {"c", {"x"}}};
  EXPECT_EQ(scan(body), expected);
  EXPECT_EQ(scan(body, 1), expected);
}

// Plain "name":"value" pairs are taken whole from the chunk; the others (escapes, non-ASCII,
// whitespace, a pair cut by the chunk's end) byte by byte. Both kinds in one series, cut
// anywhere, give the same names in the same order.
TEST(SeriesScannerTest, PlainAndOtherPairsMixInOneSeries) {
  const std::string body =
      answerWith(R"({"a":"1","bc":"2","d":"é","e" : "3","__name__":"plain","f":"caf)"
                 "Ã©"
                 R"(","g":"4"},{"h":"5","__name__":"name","i":"6"},)"
                 R"({"__name__":"first","j":"7","__name__":"second"},{"k":"","":"8"})");
  const std::vector<Seen> expected = {
      {"plain", {"a", "bc", "d", "e", "f", "g"}},
      {"name", {"h", "i"}},
      {"second", {"j"}},
      {"", {"k", ""}},
  };
  for (std::size_t piece = 0; piece <= 9; ++piece) {
    EXPECT_EQ(scan(body, piece), expected) << "pieces of " << piece;
  }
  for (std::size_t cut = 1; cut < body.size(); ++cut) {
    std::vector<Seen> seen;
    const SeriesVisitor visitor = collectInto(seen);
    const std::function<void()> no_hook;
    SeriesScanner scanner(visitor, no_hook);
    scanner.feed(std::string_view(body).substr(0, cut));
    scanner.feed(std::string_view(body).substr(cut));
    scanner.finish();
    EXPECT_EQ(seen, expected) << "cut at " << cut;
  }
}

TEST(SeriesScannerTest, ErrorsRightAfterPlainPairsNameTheirByte) {
  struct Case {
    std::string series;
    std::string bad;  // the text that starts with the byte the error names
  };
  const Case cases[] = {
      {R"({"a":"1","b":"2",})", "}"},
      {R"({"a":"1","b":"2" "c":"3"})", R"("c")"},
      {R"({"a":"1","b":"2":"c"})", R"(:"c")"},
      {R"({"a":"1","b":"2"]})", "]"},
  };
  for (const auto& [series, bad] : cases) {
    const std::string body = answerWith(series);
    const std::string message = rejection(body);
    const std::size_t offset = body.find(bad, body.find(R"("2")"));
    EXPECT_NE(message.find("at byte " + std::to_string(offset)), std::string::npos)
        << series << ": " << message;
  }
}

TEST(SeriesScannerTest, MoreThanTenThousandLabelsIsABadResponse) {
  auto series = [](std::size_t labels) {
    std::string text = R"({"__name__":"up")";
    for (std::size_t i = 0; i < labels; ++i) text += ",\"l" + std::to_string(i) + "\":\"v\"";
    return answerWith(text + "}");
  };
  EXPECT_EQ(scan(series(10000)).at(0).labels.size(), 10000u);
  EXPECT_EQ(scan(series(10000), 7).at(0).labels.size(), 10000u);
  const std::string message = rejection(series(10001));
  EXPECT_NE(message.find("more than 10000 labels"), std::string::npos) << message;
}

}  // namespace
}  // namespace metrics_adapter::prometheus
