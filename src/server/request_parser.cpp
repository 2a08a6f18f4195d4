#include "server/request_parser.h"

#include <boost/beast/http/error.hpp>

namespace metrics_adapter::server {
namespace beast = boost::beast;
namespace http = beast::http;

void RequestParser::on_request_impl(http::verb method, beast::string_view method_string,
                                    beast::string_view target, int /*version*/,
                                    beast::error_code& /*ec*/) {
  method_ = method;
  request_.method.assign(method_string.data(), method_string.size());
  request_.target.assign(target.data(), target.size());
  request_.body.clear();
  fields_ = 0;
}

void RequestParser::on_response_impl(int /*code*/, beast::string_view /*reason*/, int /*version*/,
                                     beast::error_code& ec) {
  ec = http::error::bad_method;  // unreachable for a request parser
}

void RequestParser::on_field_impl(http::field /*name*/, beast::string_view name_string,
                                  beast::string_view value, beast::error_code& /*ec*/) {
  auto& headers = request_.headers;
  if (fields_ < headers.size()) {  // the previous request's line: its strings are reused
    headers[fields_].first.assign(name_string.data(), name_string.size());
    headers[fields_].second.assign(value.data(), value.size());
  } else {
    headers.emplace_back(std::string(name_string.data(), name_string.size()),
                         std::string(value.data(), value.size()));
  }
  ++fields_;
}

void RequestParser::on_header_impl(beast::error_code& /*ec*/) {
  request_.headers.resize(fields_);  // drops what the previous request had beyond these
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                                      beast::error_code& /*ec*/) {
  // basic_parser has already refused a Content-Length above body_limit.
  if (content_length) request_.body.reserve(static_cast<std::size_t>(*content_length));
}

std::size_t RequestParser::on_body_impl(beast::string_view body, beast::error_code& /*ec*/) {
  request_.body.append(body.data(), body.size());
  return body.size();
}

void RequestParser::on_chunk_header_impl(std::uint64_t /*size*/, beast::string_view /*extensions*/,
                                         beast::error_code& /*ec*/) {}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t /*remain*/, beast::string_view body,
                                              beast::error_code& /*ec*/) {
  request_.body.append(body.data(), body.size());
  return body.size();
}

void RequestParser::on_finish_impl(beast::error_code& /*ec*/) {}

}  // namespace metrics_adapter::server
