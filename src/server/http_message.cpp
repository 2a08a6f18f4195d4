#include "server/http_message.h"

#include <spdlog/spdlog.h>

#include <boost/beast/http/field.hpp>
#include <utility>

#include "metrics_adapter/server/status.h"
#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::server {
namespace http = boost::beast::http;
namespace {

bool isSafeHeaderText(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

bool hasNoBody(int status) { return status == 204 || status == 304; }

}  // namespace

std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (text::equalsIgnoringAsciiCase(key, name)) return value;
  }
  return {};
}

HttpRequest toHttpRequest(ParsedRequest&& parsed, std::string remote_address,
                          std::vector<std::string> peer_certificates_pem) {
  HttpRequest request;
  request.method = std::move(parsed.method_string);
  request.target = std::move(parsed.target);
  request.headers = std::move(parsed.headers);
  request.body = std::move(parsed.body);
  request.remote_address = std::move(remote_address);
  request.peer_certificates_pem = std::move(peer_certificates_pem);
  return request;
}

BeastResponse toBeastResponse(HttpResponse response, bool head_request) {
  if (response.status < 200 || response.status > 599) {
    spdlog::error("handler returned invalid HTTP status {}; answering 500", response.status);
    response = statusResponse(500, "InternalError", "Internal error occurred");
  }
  BeastResponse message;
  message.version(11);
  message.result(static_cast<unsigned>(response.status));
  bool has_cache_control = false;
  for (const auto& [name, value] : response.headers) {
    if (name.empty() || !isSafeHeaderText(name) || !isSafeHeaderText(value)) {
      spdlog::error("dropping response header with forbidden characters: {}", name);
      continue;
    }
    has_cache_control = has_cache_control || text::equalsIgnoringAsciiCase(name, "Cache-Control");
    message.insert(name, value);
  }
  if (!response.content_type.empty() && isSafeHeaderText(response.content_type)) {
    message.set(http::field::content_type, response.content_type);
  }
  message.set("X-Content-Type-Options", "nosniff");
  if (!has_cache_control) message.set(http::field::cache_control, "no-cache, private");
  if (hasNoBody(response.status)) {
    message.erase(http::field::content_length);
    return message;
  }
  message.content_length(response.bodyText().size());
  if (!head_request) {
    message.body().owned = std::move(response.body);
    message.body().shared = std::move(response.shared_body);
  }
  return message;
}

HttpResponse statusResponse(int code, std::string_view reason, std::string_view message) {
  HttpResponse response;
  response.status = code;
  response.content_type = "application/json";
  response.body = statusJson(code, reason, message);
  return response;
}

}  // namespace metrics_adapter::server
