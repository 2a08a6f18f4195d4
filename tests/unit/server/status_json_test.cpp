#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "metrics_adapter/server/status.h"

namespace metrics_adapter::server {
namespace {

struct QuoteCase {
  const char* name;
  std::string input;
  std::string expected;
};

// Expected escapes follow Go's encoding/json (which produced upstream Status bodies,
// docs/api-contract.md "Content negotiation"): short escapes for \n \r \t, \u00XX for other
// controls, HTML-safe <, >, &, U+2028/9 escaped, and one U+FFFD per byte of invalid UTF-8.
class JsonQuoteTest : public ::testing::TestWithParam<QuoteCase> {};

TEST_P(JsonQuoteTest, EscapesLikeGo) {
  EXPECT_EQ(jsonQuote(GetParam().input), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonQuoteTest,
    ::testing::Values(
        QuoteCase{"Plain", "abc", R"("abc")"}, QuoteCase{"Empty", "", R"("")"},
        QuoteCase{"QuoteAndBackslash", R"(a"b\c)", R"("a\"b\\c")"},
        QuoteCase{"ShortEscapes", "\n\r\t", R"("\n\r\t")"},
        QuoteCase{"OtherControls", std::string("\x01\x1f\0", 3), R"("\u0001\u001f\u0000")"},
        QuoteCase{"HtmlSafe", "<a>&", R"("\u003ca\u003e\u0026")"},
        QuoteCase{"TwoByteUtf8Kept", "caf\xC3\xA9", "\"caf\xC3\xA9\""},
        QuoteCase{"ThreeByteUtf8Kept", "\xE2\x82\xAC", "\"\xE2\x82\xAC\""},
        QuoteCase{"FourByteUtf8Kept", "\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\""},
        QuoteCase{"LineSeparators", "\xE2\x80\xA8\xE2\x80\xA9", R"("\u2028\u2029")"},
        QuoteCase{"InvalidByte",
                  "a\xFF"
                  "b",
                  R"("a\ufffdb")"},
        QuoteCase{"TruncatedSequence", "a\xC3", R"("a\ufffd")"},
        QuoteCase{"OverlongNul", "\xC0\x80", R"("\ufffd\ufffd")"},
        QuoteCase{"Surrogate", "\xED\xA0\x80", R"("\ufffd\ufffd\ufffd")"},
        QuoteCase{"AboveMaxCodePoint", "\xF4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(StatusJsonTest, HasTheStatusFieldsInUpstreamOrder) {
  // docs/api-contract.md "Status responses": kind, apiVersion, metadata {}, status Failure,
  // message, reason, code.
  EXPECT_EQ(statusJson(429, "TooManyRequests", "Too many requests: please try again later"),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Too many requests: please try again later","reason":"TooManyRequests",)"
            R"("code":429})");
}

TEST(StatusJsonTest, EscapesMessageAndReason) {
  EXPECT_EQ(statusJson(400, "Bad\"Reason", "line1\nline2"),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"line1\nline2","reason":"Bad\"Reason","code":400})");
}

struct DetailsCase {
  const char* name;
  std::optional<StatusDetails> details;
  std::string expected_details;  // the text between "reason":"R", and "code"; empty: none
};

// details follow Kubernetes' metav1.StatusDetails: name, group, kind, causes, in that order; a
// field is written when the caller set it.
class StatusDetailsTest : public ::testing::TestWithParam<DetailsCase> {};

TEST_P(StatusDetailsTest, WritesTheDetailsTheCallerSet) {
  const std::string head = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                           R"("message":"m","reason":"R",)";
  EXPECT_EQ(statusJson(500, "R", "m", GetParam().details),
            head + GetParam().expected_details + R"("code":500})");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StatusDetailsTest,
    ::testing::Values(
        DetailsCase{"None", std::nullopt, ""},
        DetailsCase{"EmptyObject", StatusDetails{}, R"("details":{},)"},
        DetailsCase{"ForbiddenResource",
                    StatusDetails{.name = "", .group = "custom.metrics.k8s.io", .kind = "pods"},
                    R"("details":{"name":"","group":"custom.metrics.k8s.io","kind":"pods"},)"},
        DetailsCase{"KindOnly", StatusDetails{.kind = "nodes"}, R"("details":{"kind":"nodes"},)"},
        DetailsCase{"OneCause", StatusDetails{.causes = {{"boom"}}},
                    R"("details":{"causes":[{"message":"boom"}]},)"},
        DetailsCase{"TwoCauses", StatusDetails{.causes = {{"a"}, {"b"}}},
                    R"("details":{"causes":[{"message":"a"},{"message":"b"}]},)"},
        DetailsCase{"NameAndCause", StatusDetails{.name = "n", .causes = {{"c"}}},
                    R"("details":{"name":"n","causes":[{"message":"c"}]},)"},
        DetailsCase{
            "EscapedLikeMessages", StatusDetails{.name = "a\"b\xFF", .causes = {{"<x>\n"}}},
            R"("details":{"name":"a\"b\ufffd","causes":[{"message":"\u003cx\u003e\n"}]},)"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace metrics_adapter::server
