#include "server/http_message.h"

#include <gtest/gtest.h>

#include <boost/beast/http.hpp>
#include <string>

namespace metrics_adapter::server {
namespace {
namespace http = boost::beast::http;

std::string field(const BeastResponse& response, std::string_view name) {
  const auto it = response.find(boost::beast::string_view(name.data(), name.size()));
  return it == response.end() ? "<absent>" : std::string(it->value());
}

TEST(HttpRequestTest, HeaderIsCaseInsensitiveAndReturnsTheFirstValue) {
  HttpRequest request;
  request.headers = {{"X-Remote-Group", "a"}, {"x-remote-group", "b"}, {"Accept", "*/*"}};
  EXPECT_EQ(request.header("x-REMOTE-group"), "a");
  EXPECT_EQ(request.header("accept"), "*/*");
  EXPECT_EQ(request.header("Missing"), "");
}

TEST(HttpRequestTest, ConversionMovesEveryPart) {
  ParsedRequest parsed;
  parsed.method = http::verb::get;
  parsed.method_string = "GET";
  parsed.target = "/apis/x/v1beta1/namespaces/a/pods/%2A/m?x=1";
  parsed.headers = {{"X-Remote-Group", "a"}, {"Accept", "*/*"}, {"X-Remote-Group", "b"}};
  parsed.body = "payload";
  const HttpRequest request = toHttpRequest(std::move(parsed), "127.0.0.1:1234", {"PEM"});
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/apis/x/v1beta1/namespaces/a/pods/%2A/m?x=1");
  EXPECT_EQ(request.headers,
            (std::vector<std::pair<std::string, std::string>>{
                {"X-Remote-Group", "a"}, {"Accept", "*/*"}, {"X-Remote-Group", "b"}}));
  EXPECT_EQ(request.body, "payload");
  EXPECT_EQ(request.remote_address, "127.0.0.1:1234");
  EXPECT_EQ(request.peer_certificates_pem, std::vector<std::string>{"PEM"});
}

TEST(HttpResponseTest, SetsContentHeadersAndExtras) {
  HttpResponse response;
  response.status = 201;
  response.body = "{}";
  response.headers = {{"Audit-Id", "1"}, {"Warning", "a"}, {"Warning", "b"}};
  const BeastResponse message = toBeastResponse(response, false);
  EXPECT_EQ(message.result_int(), 201u);
  EXPECT_EQ(field(message, "Content-Type"),
            "application/json");  // docs/api-contract.md "Content negotiation"
  EXPECT_EQ(field(message, "Content-Length"), "2");
  EXPECT_EQ(field(message, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(field(message, "Cache-Control"), "no-cache, private");
  EXPECT_EQ(field(message, "Audit-Id"), "1");
  EXPECT_EQ(message.count("Warning"), 2u);
  EXPECT_EQ(message.body().view(), "{}");
}

TEST(HttpResponseTest, SharedBodyIsWrittenWithoutACopy) {
  HttpResponse response;
  response.body = "not sent";
  response.shared_body = std::make_shared<const std::string>("{\"kind\":\"APIResourceList\"}\n");
  const BeastResponse message = toBeastResponse(response, false);
  EXPECT_EQ(field(message, "Content-Length"), std::to_string(response.shared_body->size()));
  EXPECT_EQ(message.body().view(), *response.shared_body);
  EXPECT_EQ(message.body().view().data(), response.shared_body->data());  // the same bytes

  const BeastResponse head = toBeastResponse(response, true);
  EXPECT_EQ(field(head, "Content-Length"), std::to_string(response.shared_body->size()));
  EXPECT_EQ(head.body().view(), "");
}

TEST(HttpResponseTest, HandlerCacheControlWins) {
  HttpResponse response;
  response.headers = {{"cache-control", "max-age=10"}};
  const BeastResponse message = toBeastResponse(response, false);
  EXPECT_EQ(message.count(http::field::cache_control), 1u);
  EXPECT_EQ(field(message, "Cache-Control"), "max-age=10");
}

TEST(HttpResponseTest, HeadKeepsContentLengthButDropsTheBody) {
  const BeastResponse message =
      toBeastResponse(HttpResponse{200, "text/plain", {}, "hello", {}, nullptr}, true);
  EXPECT_EQ(field(message, "Content-Length"), "5");
  EXPECT_EQ(message.body().view(), "");
}

TEST(HttpResponseTest, HeaderInjectionIsDropped) {
  HttpResponse response;
  response.headers = {{"X-Ok", "1"}, {"X-Bad", "a\r\nSet-Cookie: x"}, {"X-Bad\n", "1"}};
  const BeastResponse message = toBeastResponse(response, false);
  EXPECT_EQ(field(message, "X-Ok"), "1");
  EXPECT_EQ(message.count("X-Bad"), 0u);
  EXPECT_EQ(message.count("Set-Cookie"), 0u);
}

TEST(HttpResponseTest, InvalidStatusBecomesInternalError) {
  for (int status : {0, 99, 101, 600, -1}) {
    const BeastResponse message =
        toBeastResponse(HttpResponse{status, "text/plain", {}, "x", {}, nullptr}, false);
    EXPECT_EQ(message.result_int(), 500u) << status;
    EXPECT_NE(message.body().view().find(R"("reason":"InternalError")"), std::string::npos)
        << status;
  }
}

TEST(HttpResponseTest, NoContentHasNoBody) {
  const BeastResponse message =
      toBeastResponse(HttpResponse{204, "", {}, "ignored", {}, nullptr}, false);
  EXPECT_EQ(message.body().view(), "");
  EXPECT_EQ(message.count(http::field::content_length), 0u);
}

TEST(HttpResponseTest, StatusResponseCarriesAStatusBody) {
  const HttpResponse response = statusResponse(413, "RequestEntityTooLarge", "too big");
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_EQ(response.body, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                           R"("message":"too big","reason":"RequestEntityTooLarge","code":413})");
}

}  // namespace
}  // namespace metrics_adapter::server
