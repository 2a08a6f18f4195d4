#pragma once

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/verb.hpp>
#include <cstddef>
#include <cstdint>

#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::server {

// Beast's HTTP/1.1 request parser storing the request exactly as received (every header line,
// in arrival order, even across names) into the HttpRequest it is given: its method, target,
// headers and body are replaced, the rest is left alone. Unlike http::request_parser it has no
// 64 KiB per-field limit (Beast's fields container throws above that). Sizes are bounded by
// header_limit() and body_limit(), which the caller sets before parsing.
// A connection parses every request into the same HttpRequest, and the strings and header
// list keep their capacity from one request to the next: a request like the one before it
// allocates nothing (docs/performance.md, round 4).
class RequestParser final : public boost::beast::http::basic_parser<true> {
 public:
  explicit RequestParser(HttpRequest& storage) : request_(storage) {}

  boost::beast::http::verb method() const { return method_; }

 private:
  void on_request_impl(boost::beast::http::verb method, boost::beast::string_view method_string,
                       boost::beast::string_view target, int version,
                       boost::beast::error_code& ec) override;
  void on_response_impl(int code, boost::beast::string_view reason, int version,
                        boost::beast::error_code& ec) override;
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code& ec) override;
  void on_header_impl(boost::beast::error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         boost::beast::error_code& ec) override;
  std::size_t on_body_impl(boost::beast::string_view body, boost::beast::error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, boost::beast::string_view extensions,
                            boost::beast::error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t remain, boost::beast::string_view body,
                                 boost::beast::error_code& ec) override;
  void on_finish_impl(boost::beast::error_code& ec) override;

  HttpRequest& request_;
  boost::beast::http::verb method_ = boost::beast::http::verb::unknown;
  std::size_t fields_ = 0;  // header lines of this request so far
};

}  // namespace metrics_adapter::server
