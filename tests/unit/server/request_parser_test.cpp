#include "server/request_parser.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <string>
#include <utility>
#include <vector>

namespace metrics_adapter::server {
namespace {
namespace http = boost::beast::http;
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Parsed {
  boost::beast::error_code ec;
  bool done = false;
  bool keep_alive = false;
  http::verb method = http::verb::unknown;
  HttpRequest request;
};

Parsed parse(const std::string& wire, std::uint32_t header_limit = 8192,
             std::uint64_t body_limit = 1024) {
  Parsed result;
  RequestParser parser(result.request);
  parser.eager(true);
  parser.header_limit(header_limit);
  parser.body_limit(body_limit);
  parser.put(boost::asio::buffer(wire), result.ec);
  result.done = parser.is_done();
  if (parser.is_header_done()) result.keep_alive = parser.keep_alive();
  result.method = parser.method();
  return result;
}

TEST(RequestParserTest, KeepsEveryHeaderLineInArrivalOrder) {
  // docs/api-contract.md "Header handling": one X-Remote-Group line per group, never comma-joined
  // or regrouped.
  const Parsed parsed = parse(
      "GET /apis/m/v1beta1/namespaces/a/pods/%2A/x?labelSelector=a%3Db HTTP/1.1\r\n"
      "Host: h\r\nX-Remote-Group: system:masters\r\nAccept: */*\r\n"
      "X-Remote-Group: a,b\r\nx-remote-group: c\r\n\r\n");
  ASSERT_FALSE(parsed.ec) << parsed.ec.message();
  EXPECT_TRUE(parsed.done);
  EXPECT_EQ(parsed.method, http::verb::get);
  EXPECT_EQ(parsed.request.method, "GET");
  EXPECT_EQ(parsed.request.target, "/apis/m/v1beta1/namespaces/a/pods/%2A/x?labelSelector=a%3Db");
  EXPECT_EQ(parsed.request.headers, (Headers{{"Host", "h"},
                                             {"X-Remote-Group", "system:masters"},
                                             {"Accept", "*/*"},
                                             {"X-Remote-Group", "a,b"},
                                             {"x-remote-group", "c"}}));
  EXPECT_TRUE(parsed.keep_alive);  // HTTP/1.1 default
}

TEST(RequestParserTest, ReadsContentLengthAndChunkedBodies) {
  Parsed plain = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello");
  ASSERT_FALSE(plain.ec) << plain.ec.message();
  EXPECT_EQ(plain.request.body, "hello");
  Parsed chunked = parse(
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n");
  ASSERT_FALSE(chunked.ec) << chunked.ec.message();
  EXPECT_TRUE(chunked.done);
  EXPECT_EQ(chunked.request.body, "abcde");
}

TEST(RequestParserTest, ConnectionCloseAndHttp10AreNotKeepAlive) {
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").keep_alive);
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
}

TEST(RequestParserTest, LimitsAreEnforced) {
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nX: " + std::string(200, 'a') + "\r\n\r\n", 128).ec,
            http::error::header_limit);
  EXPECT_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 2048\r\n\r\n", 8192, 1024).ec,
            http::error::body_limit);
  EXPECT_EQ(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "400\r\n" +
                      std::string(1024, 'x') + "\r\n1\r\ny\r\n0\r\n\r\n",
                  8192, 1024)
                .ec,
            http::error::body_limit);
}

TEST(RequestParserTest, FieldsLongerThan64KiBAreAccepted) {
  // Beast's own fields container throws std::length_error above 64 KiB per field; this parser
  // must leave that bound to header_limit.
  const std::string value(100 * 1024, 'v');
  const Parsed parsed = parse("GET / HTTP/1.1\r\nX-Long: " + value + "\r\n\r\n", 1 << 20);
  ASSERT_FALSE(parsed.ec) << parsed.ec.message();
  ASSERT_EQ(parsed.request.headers.size(), 1u);
  EXPECT_EQ(parsed.request.headers[0].second, value);
}

TEST(RequestParserTest, UnknownMethodsKeepTheirName) {
  const Parsed parsed = parse("BREW /pot HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_FALSE(parsed.ec) << parsed.ec.message();
  EXPECT_EQ(parsed.method, http::verb::unknown);
  EXPECT_EQ(parsed.request.method, "BREW");
}

TEST(RequestParserTest, ARequestParsedIntoTheOneBeforeKeepsNothingOfIt) {
  HttpRequest request;
  request.remote_address = "10.0.0.1:5000";  // set by the connection once, never by a parse
  {
    RequestParser parser(request);
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(std::string(
                   "POST /first?a=1 HTTP/1.1\r\nHost: h\r\nX-Remote-User: alice\r\n"
                   "X-Remote-Group: a-rather-long-group-name\r\nContent-Length: 3\r\n\r\nabc")),
               ec);
    ASSERT_FALSE(ec) << ec.message();
  }
  RequestParser parser(request);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(std::string("GET /second HTTP/1.1\r\nHost: other\r\n\r\n")), ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/second");
  EXPECT_EQ(request.headers, (Headers{{"Host", "other"}}));
  EXPECT_EQ(request.body, "");
  EXPECT_EQ(request.remote_address, "10.0.0.1:5000");
}

}  // namespace
}  // namespace metrics_adapter::server
