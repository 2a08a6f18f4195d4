#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "metrics_adapter/api/router.h"
#include "unit/api/empty_router.h"
#include "unit/api/route_request.h"

namespace metrics_adapter::api {
namespace {

std::string responseHeader(const server::HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

server::HttpResponse openApiGet(const std::string& target,
                                std::vector<std::pair<std::string, std::string>> headers = {}) {
  static const auto router = testing::emptyRouter();
  server::HttpRequest request;
  request.method = "GET";
  request.target = target;
  request.headers = std::move(headers);
  return testing::routeRequest(*router, request);
}

TEST(RouterOpenApi, V2IsServedWithAnETagAndA304ForIt) {
  const auto first = openApiGet("/openapi/v2", {{"Accept", "application/json"}});
  ASSERT_EQ(first.status, 200) << first.bodyText();
  EXPECT_EQ(first.content_type, "application/json");
  EXPECT_EQ(Json::parse(first.bodyText())["swagger"], "2.0");
  const std::string etag = responseHeader(first, "ETag");
  ASSERT_FALSE(etag.empty());
  const auto again = openApiGet("/openapi/v2", {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.bodyText().empty());
  EXPECT_EQ(openApiGet("/openapi/v2", {{"If-None-Match", "\"other\""}}).status, 200);
}

TEST(RouterOpenApi, ProtobufOnlyIs406AndProtobufOrJsonGetsJson) {
  const char* protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
  const auto refused = openApiGet("/openapi/v2", {{"Accept", protobuf}});
  EXPECT_EQ(refused.status, 406);
  EXPECT_EQ(Json::parse(refused.bodyText())["reason"], "NotAcceptable");
  const auto json =
      openApiGet("/openapi/v2", {{"Accept", std::string(protobuf) + ", application/json"}});
  EXPECT_EQ(json.status, 200);
  EXPECT_EQ(json.content_type, "application/json");
}

TEST(RouterOpenApi, V3IndexLeadsToImmutableDocuments) {
  const auto index = openApiGet("/openapi/v3");
  ASSERT_EQ(index.status, 200);
  const Json paths = Json::parse(index.bodyText())["paths"];
  ASSERT_TRUE(paths.contains("apis/custom.metrics.k8s.io/v1beta2"));
  EXPECT_FALSE(paths.contains("apis/metrics.k8s.io/v1beta1"));  // no resourceRules here
  for (const auto& [path, entry] : paths.items()) {
    const std::string url = entry["serverRelativeURL"];
    const auto document = openApiGet(url);
    ASSERT_EQ(document.status, 200) << url;
    EXPECT_EQ(Json::parse(document.bodyText())["openapi"], "3.0.0");
    EXPECT_EQ(responseHeader(document, "Cache-Control"), "public, immutable");
    EXPECT_NE(responseHeader(document, "Expires").find(" GMT"), std::string::npos);
    const std::string hash = url.substr(url.find("?hash=") + 6);
    EXPECT_EQ(responseHeader(document, "ETag"), "\"" + hash + "\"");
    EXPECT_EQ(openApiGet(url, {{"If-None-Match", "\"" + hash + "\""}}).status, 304);
    // Without a hash: the same document, but not to be kept for ever.
    const auto unpinned = openApiGet("/openapi/v3/" + path);
    EXPECT_EQ(unpinned.bodyText(), document.bodyText());
    EXPECT_EQ(responseHeader(unpinned, "Cache-Control"), "");
    // An old hash: moved to the current one.
    const auto moved = openApiGet("/openapi/v3/" + path + "?hash=0123");
    EXPECT_EQ(moved.status, 301);
    EXPECT_EQ(responseHeader(moved, "Location"), url);
  }
}

TEST(RouterOpenApi, UnknownDocumentsAre404Status) {
  for (const char* target : {"/openapi/v3/apis/metrics.k8s.io/v1beta1", "/openapi/v3/apis/x/v1",
                             "/openapi/v3/api/v1", "/openapi/v4", "/openapi"}) {
    const auto response = openApiGet(target);
    EXPECT_EQ(response.status, 404) << target;
    EXPECT_EQ(Json::parse(response.bodyText())["reason"], "NotFound") << target;
  }
}

TEST(RouterOpenApi, RouteLabelIsOpenApiAndAnsweredFromMemory) {
  const auto info =
      server::parseRequestInfo("GET", "/openapi/v3/apis/custom.metrics.k8s.io/v1beta1");
  EXPECT_EQ(routeLabel(info), "openapi");
  EXPECT_TRUE(Router::answersFromMemory(info));
}

}  // namespace
}  // namespace metrics_adapter::api
