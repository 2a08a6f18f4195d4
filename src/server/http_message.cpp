#include "server/http_message.h"

#include <spdlog/spdlog.h>

#include <boost/beast/http/status.hpp>
#include <charconv>
#include <cstdint>
#include <iterator>
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

// Header fields that frame the message on the connection, which only the server sets.
bool isFraming(std::string_view name) {
  return text::equalsIgnoringAsciiCase(name, "Content-Length") ||
         text::equalsIgnoringAsciiCase(name, "Transfer-Encoding") ||
         text::equalsIgnoringAsciiCase(name, "Connection");
}

void appendField(std::string& head, std::string_view name, std::string_view value) {
  head.append(name);
  head.append(": ");
  head.append(value);
  head.append("\r\n");
}

void appendHeaderNumber(std::string& head, std::uint64_t number) {
  char digits[20];
  const auto end = std::to_chars(std::begin(digits), std::end(digits), number).ptr;
  head.append(digits, end);
}

}  // namespace

std::string HttpRequest::header(std::string_view name) const {
  return std::string(headerView(name));
}

std::string_view HttpRequest::headerView(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (text::equalsIgnoringAsciiCase(key, name)) return value;
  }
  return {};
}

void WireResponse::clear() {
  body = {};
  response.reset();
}

void renderResponse(HttpResponse response, bool head_request, bool keep_alive, WireResponse& wire,
                    std::string_view audit_id) {
  if (response.status < 200 || response.status > 599) {
    SPDLOG_ERROR("handler returned invalid HTTP status {}; answering 500", response.status);
    response = statusResponse(500, "InternalError", "Internal error occurred");
  }
  std::string& head = wire.head;
  head.assign("HTTP/1.1 ");
  appendHeaderNumber(head, static_cast<std::uint64_t>(response.status));
  head.push_back(' ');
  const auto reason = http::obsolete_reason(static_cast<http::status>(response.status));
  head.append(reason.data(), reason.size());
  head.append("\r\n");
  bool has_cache_control = false;
  for (const auto& [name, value] : response.headers) {
    if (name.empty() || !isSafeHeaderText(name) || !isSafeHeaderText(value)) {
      SPDLOG_ERROR("dropping response header with forbidden characters: {}", name);
      continue;
    }
    if (isFraming(name)) {
      SPDLOG_ERROR("dropping response header {}: the server frames the answer", name);
      continue;
    }
    has_cache_control = has_cache_control || text::equalsIgnoringAsciiCase(name, "Cache-Control");
    appendField(head, name, value);
  }
  if (!response.content_type.empty() && isSafeHeaderText(response.content_type)) {
    appendField(head, "Content-Type", response.content_type);
  }
  appendField(head, "X-Content-Type-Options", "nosniff");
  if (!audit_id.empty() && isSafeHeaderText(audit_id)) appendField(head, "Audit-Id", audit_id);
  if (!has_cache_control) appendField(head, "Cache-Control", "no-cache, private");
  const bool body_allowed = !hasNoBody(response.status);
  if (body_allowed) {
    head.append("Content-Length: ");
    appendHeaderNumber(head, response.bodyText().size());
    head.append("\r\n");
  }
  if (!keep_alive) appendField(head, "Connection", "close");
  head.append("\r\n");
  const HttpResponse& kept = wire.response.emplace(std::move(response));
  wire.body = body_allowed && !head_request ? kept.bodyText() : std::string_view();
}

HttpResponse statusResponse(int code, std::string_view reason, std::string_view message) {
  HttpResponse response;
  response.status = code;
  response.content_type = "application/json";
  response.body = statusJson(code, reason, message);
  return response;
}

}  // namespace metrics_adapter::server
