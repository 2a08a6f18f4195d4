#include "metrics_adapter/api/api_error.h"

#include <gtest/gtest.h>

#include <string>

namespace metrics_adapter::api {
namespace {

struct ErrorCase {
  const char* name;
  ApiError error;
};

// toStatusJson must give clients what the nlohmann-built Status gave them (same parsed JSON,
// members in the same order), so that callers can switch writers without a visible change.
class ApiErrorStatusTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ApiErrorStatusTest, MatchesTheJsonStatusObject) {
  const ApiError& error = GetParam().error;
  const Json previous = statusObject(error.code(), error.reason(), error.what(), error.details());
  EXPECT_EQ(Json::parse(error.toStatusJson()), previous);
  EXPECT_EQ(Json::parse(error.toStatusJson()).dump(), previous.dump());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ApiErrorStatusTest,
    ::testing::Values(
        ErrorCase{"BadRequest", ApiError::badRequest("invalid labelSelector \"a==\"")},
        ErrorCase{"NotFound", ApiError::notFound("the server could not find the metric x")},
        ErrorCase{"Unavailable", ApiError::unavailable("unable to fetch metrics from Prometheus")},
        ErrorCase{"InternalWithCause", ApiError::internal("metricsQuery of rules[0] failed")},
        ErrorCase{"EmptyDetailsObject",
                  ApiError(404, "NotFound", "the server could not find the requested resource",
                           Json::object())},
        ErrorCase{
            "ForbiddenLikeDetails",
            ApiError(403, "Forbidden", "forbidden",
                     Json{{"name", ""}, {"group", "custom.metrics.k8s.io"}, {"kind", "pods"}})},
        ErrorCase{"ControlCharactersAndHtml",
                  ApiError::internal("bad \x01 <query> & \"quotes\"\n")}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ApiErrorTest, InternalNamesTheCause) {
  const ApiError error = ApiError::internal("boom");
  ASSERT_TRUE(error.statusDetails());
  ASSERT_EQ(error.statusDetails()->causes.size(), 1u);
  EXPECT_EQ(error.statusDetails()->causes[0].message, "boom");
  EXPECT_EQ(error.toStatusJson(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Internal error occurred: boom","reason":"InternalError",)"
            R"("details":{"causes":[{"message":"boom"}]},"code":500})");
}

TEST(ApiErrorTest, InvalidUtf8BecomesTheReplacementCharacter) {
  // What nlohmann's dump with error_handler_t::replace gave: one U+FFFD for the bad byte.
  const ApiError error = ApiError::notFound("metric a\xFF");
  EXPECT_EQ(Json::parse(error.toStatusJson())["message"], "metric a\xEF\xBF\xBD");
}

}  // namespace
}  // namespace metrics_adapter::api
