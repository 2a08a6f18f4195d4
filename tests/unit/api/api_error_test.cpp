#include "metrics_adapter/api/api_error.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace metrics_adapter::api {
namespace {

struct ErrorCase {
  const char* name;
  ApiError error;
  Json details;  // what the Status's details must hold; null when there are none
};

// The Status upstream writes (metav1.Status, members in its order), built independently of
// server::statusJson as the test's oracle.
Json expectedStatus(const ApiError& error, const Json& details) {
  Json status = {{"kind", "Status"},    {"apiVersion", "v1"},      {"metadata", Json::object()},
                 {"status", "Failure"}, {"message", error.what()}, {"reason", error.reason()}};
  if (!details.is_null()) status["details"] = details;
  status["code"] = error.code();
  return status;
}

class ApiErrorStatusTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ApiErrorStatusTest, WritesUpstreamsStatus) {
  const ErrorCase& c = GetParam();
  const Json expected = expectedStatus(c.error, c.details);
  EXPECT_EQ(Json::parse(c.error.toStatusJson()), expected);
  EXPECT_EQ(Json::parse(c.error.toStatusJson()).dump(), expected.dump());  // member order too
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ApiErrorStatusTest,
    ::testing::Values(
        ErrorCase{"BadRequest", ApiError::badRequest("invalid labelSelector \"a==\""), nullptr},
        ErrorCase{"NotFound", ApiError::notFound("the server could not find the metric x"),
                  nullptr},
        ErrorCase{"Unavailable", ApiError::unavailable("unable to fetch metrics from Prometheus"),
                  nullptr},
        ErrorCase{"InternalWithCause",
                  ApiError::internal("metricsQuery of rules[0] failed"),
                  {{"causes", {{{"message", "metricsQuery of rules[0] failed"}}}}}},
        ErrorCase{"EmptyDetailsObject",
                  ApiError(404, "NotFound", "the server could not find the requested resource",
                           server::StatusDetails{}),
                  Json::object()},
        ErrorCase{"ForbiddenLikeDetails",
                  ApiError(403, "Forbidden", "forbidden",
                           server::StatusDetails{
                               .name = "", .group = "custom.metrics.k8s.io", .kind = "pods"}),
                  {{"name", ""}, {"group", "custom.metrics.k8s.io"}, {"kind", "pods"}}},
        ErrorCase{"ControlCharactersAndHtml",
                  ApiError::internal("bad \x01 <query> & \"quotes\"\n"),
                  {{"causes", {{{"message", "bad \x01 <query> & \"quotes\"\n"}}}}}}),
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
