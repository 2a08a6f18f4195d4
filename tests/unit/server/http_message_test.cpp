#include "server/http_message.h"

#include <gtest/gtest.h>

#include <boost/beast/http.hpp>
#include <string>

namespace metrics_adapter::server {
namespace {
namespace http = boost::beast::http;

using WireMessage = http::response<http::string_body>;

// What a client reads of `response`: the rendered head and body parsed by Beast's own parser,
// so every answer is also checked to be well-formed HTTP.
WireMessage written(HttpResponse response, bool head_request = false, bool keep_alive = true) {
  WireResponse wire;
  renderResponse(std::move(response), head_request, keep_alive, wire);
  const std::string bytes = wire.head + std::string(wire.body);
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  parser.skip(head_request);
  boost::beast::error_code ec;
  const std::size_t used = parser.put(boost::asio::buffer(bytes), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  EXPECT_FALSE(ec) << ec.message() << "\n" << bytes;
  EXPECT_TRUE(parser.is_done()) << bytes;
  EXPECT_EQ(used, bytes.size()) << bytes;
  return parser.release();
}

std::string field(const WireMessage& response, std::string_view name) {
  const auto it = response.find(boost::beast::string_view(name.data(), name.size()));
  return it == response.end() ? "<absent>" : std::string(it->value());
}

TEST(RenderResponseTest, TheAuditIdGoesOutAsUpstreamNamesIt) {
  WireResponse wire;
  renderResponse(HttpResponse{}, false, true, wire, "5b0c2f1e-0000-4000-8000-000000000001");
  EXPECT_NE(wire.head.find("\r\nAudit-Id: 5b0c2f1e-0000-4000-8000-000000000001\r\n"),
            std::string::npos)
      << wire.head;
  wire.clear();
  renderResponse(HttpResponse{}, false, true, wire);  // none: no header
  EXPECT_EQ(wire.head.find("Audit-Id"), std::string::npos) << wire.head;
  wire.clear();
  renderResponse(HttpResponse{}, false, true, wire, "a\r\nSet-Cookie: x");  // never split
  EXPECT_EQ(wire.head.find("Audit-Id"), std::string::npos) << wire.head;
}

TEST(HttpRequestTest, HeaderIsCaseInsensitiveAndReturnsTheFirstValue) {
  HttpRequest request;
  request.headers = {{"X-Remote-Group", "a"}, {"x-remote-group", "b"}, {"Accept", "*/*"}};
  EXPECT_EQ(request.header("x-REMOTE-group"), "a");
  EXPECT_EQ(request.header("accept"), "*/*");
  EXPECT_EQ(request.header("Missing"), "");
}

TEST(HttpResponseTest, SetsContentHeadersAndExtras) {
  HttpResponse response;
  response.status = 201;
  response.body = "{}";
  response.headers = {{"Audit-Id", "1"}, {"Warning", "a"}, {"Warning", "b"}};
  const WireMessage message = written(response);
  EXPECT_EQ(message.result_int(), 201u);
  EXPECT_EQ(field(message, "Content-Type"),
            "application/json");  // docs/api-contract.md "Content negotiation"
  EXPECT_EQ(field(message, "Content-Length"), "2");
  EXPECT_EQ(field(message, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(field(message, "Cache-Control"), "no-cache, private");
  EXPECT_EQ(field(message, "Audit-Id"), "1");
  EXPECT_EQ(message.count("Warning"), 2u);
  EXPECT_EQ(message.count(http::field::connection), 0u);  // HTTP/1.1 keeps the connection
  EXPECT_EQ(message.body(), "{}");
}

TEST(HttpResponseTest, TheLastAnswerOfAConnectionSaysClose) {
  const WireMessage message = written(HttpResponse{}, false, /*keep_alive=*/false);
  EXPECT_EQ(field(message, "Connection"), "close");
  EXPECT_FALSE(message.keep_alive());
}

TEST(HttpResponseTest, TheHandlerCannotFrameTheAnswer) {
  HttpResponse response;
  response.body = "{}";
  response.headers = {
      {"Content-Length", "99"}, {"transfer-encoding", "chunked"}, {"Connection", "close"}};
  const WireMessage message = written(response);
  EXPECT_EQ(field(message, "Content-Length"), "2");
  EXPECT_EQ(message.count(http::field::transfer_encoding), 0u);
  EXPECT_EQ(message.count(http::field::connection), 0u);
  EXPECT_EQ(message.body(), "{}");
}

TEST(HttpResponseTest, AReusedWireResponseKeepsNothingOfTheAnswerBefore) {
  WireResponse wire;
  HttpResponse first;
  first.status = 404;
  first.headers = {{"X-First", "1"}};
  first.body = std::string(300, 'x');
  renderResponse(std::move(first), false, true, wire);
  wire.clear();
  EXPECT_TRUE(wire.body.empty());
  HttpResponse second;
  second.body = "ok";
  renderResponse(std::move(second), false, true, wire);
  EXPECT_EQ(wire.head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << wire.head;
  EXPECT_EQ(wire.head.find("X-First"), std::string::npos) << wire.head;
  EXPECT_NE(wire.head.find("Content-Length: 2\r\n"), std::string::npos) << wire.head;
  EXPECT_EQ(wire.head.substr(wire.head.size() - 4), "\r\n\r\n");
  EXPECT_EQ(wire.body, "ok");
}

TEST(HttpResponseTest, SharedBodyIsWrittenWithoutACopy) {
  HttpResponse response;
  response.body = "not sent";
  response.shared_body = std::make_shared<const std::string>("{\"kind\":\"APIResourceList\"}\n");
  const WireMessage message = written(response);
  EXPECT_EQ(field(message, "Content-Length"), std::to_string(response.shared_body->size()));
  EXPECT_EQ(message.body(), *response.shared_body);
  WireResponse wire;
  renderResponse(response, false, true, wire);
  EXPECT_EQ(wire.body.data(), response.shared_body->data());  // the same bytes, not a copy

  const WireMessage head = written(response, /*head_request=*/true);
  EXPECT_EQ(field(head, "Content-Length"), std::to_string(response.shared_body->size()));
  EXPECT_EQ(head.body(), "");
}

TEST(HttpResponseTest, HandlerCacheControlWins) {
  HttpResponse response;
  response.headers = {{"cache-control", "max-age=10"}};
  const WireMessage message = written(response);
  EXPECT_EQ(message.count(http::field::cache_control), 1u);
  EXPECT_EQ(field(message, "Cache-Control"), "max-age=10");
}

TEST(HttpResponseTest, HeadKeepsContentLengthButDropsTheBody) {
  const WireMessage message =
      written(HttpResponse{200, "text/plain", {}, "hello", {}, nullptr}, /*head_request=*/true);
  EXPECT_EQ(field(message, "Content-Length"), "5");
  EXPECT_EQ(message.body(), "");
}

TEST(HttpResponseTest, HeaderInjectionIsDropped) {
  HttpResponse response;
  response.headers = {{"X-Ok", "1"}, {"X-Bad", "a\r\nSet-Cookie: x"}, {"X-Bad\n", "1"}};
  const WireMessage message = written(response);
  EXPECT_EQ(field(message, "X-Ok"), "1");
  EXPECT_EQ(message.count("X-Bad"), 0u);
  EXPECT_EQ(message.count("Set-Cookie"), 0u);
}

TEST(HttpResponseTest, InvalidStatusBecomesInternalError) {
  for (int status : {0, 99, 101, 600, -1}) {
    const WireMessage message = written(HttpResponse{status, "text/plain", {}, "x", {}, nullptr});
    EXPECT_EQ(message.result_int(), 500u) << status;
    EXPECT_NE(message.body().find(R"("reason":"InternalError")"), std::string::npos) << status;
  }
}

TEST(HttpResponseTest, NoContentHasNoBody) {
  const WireMessage message = written(HttpResponse{204, "", {}, "ignored", {}, nullptr});
  EXPECT_EQ(message.body(), "");
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
