#pragma once

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/verb.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace metrics_adapter::server {

// A request exactly as received: every header line, in arrival order, even across names.
struct ParsedRequest {
  boost::beast::http::verb method = boost::beast::http::verb::unknown;
  std::string method_string;
  std::string target;
  int version = 11;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// Beast's HTTP/1.1 request parser storing into ParsedRequest. Unlike http::request_parser it
// keeps the order of header lines across names and has no 64 KiB per-field limit (Beast's
// fields container throws above that). Sizes are bounded by header_limit() and body_limit(),
// which the caller sets before parsing.
class RequestParser final : public boost::beast::http::basic_parser<true> {
 public:
  ParsedRequest& request() { return request_; }

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

  ParsedRequest request_;
};

}  // namespace metrics_adapter::server
