#include "app/debug_socket.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <string>
#include <utility>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/logging/logging.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::app {
namespace {

server::HttpResponse textResponse(int status, std::string body) {
  server::HttpResponse response;
  response.status = status;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::move(body);
  return response;
}

bool isHealthPath(std::string_view path) {
  for (std::string_view root : {"/healthz", "/livez", "/readyz"}) {
    if (path == root || (path.starts_with(root) && path[root.size()] == '/')) return true;
  }
  return false;
}

server::HttpResponse setVerbosity(const std::string& body) {
  std::string_view text = body;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int verbosity = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), verbosity);
  if (error != std::errc() || end != text.data() + text.size() || verbosity < 0 ||
      verbosity > 100) {
    return api::errorResponse(api::ApiError::badRequest(
        "the body must be a verbosity from 0 to 100, not \"" + body + "\""));
  }
  logging::setLogVerbosity(verbosity);
  SPDLOG_INFO("--v set to {} through the debug socket", verbosity);
  return textResponse(200,
                      "successfully set klog.logging.verbosity to " + std::string(text) + "\n");
}

}  // namespace

std::string renderGivenFlags(const AdapterOptions& options) {
  std::string text;
  for (const auto& [name, value] : options.given_flags) {
    text.append("--").append(name).append("=");
    if (name == "prometheus-header") {
      text.append(value.substr(0, value.find('='))).append("=REDACTED");
    } else {
      text.append(value);
    }
    text += '\n';
  }
  return text;
}

server::RequestHandler debugSocketHandler(const AdapterOptions& options,
                                          std::shared_ptr<const api::Router> router) {
  return [flags = renderGivenFlags(options),
          router = std::move(router)](const server::HttpRequest& request) -> server::HttpResponse {
    const std::string_view path =
        std::string_view(request.target).substr(0, std::string_view(request.target).find('?'));
    if (path == "/debug/flags/v" && request.method == "PUT") return setVerbosity(request.body);
    if (request.method != "GET" && request.method != "HEAD") {
      return api::errorResponse(
          api::ApiError(405, "MethodNotAllowed", "only GET here (and PUT /debug/flags/v)"));
    }
    if (path == "/debug/flags") return textResponse(200, flags);
    if (path == "/metrics" || isHealthPath(path)) {
      return router->route(request, server::parseRequestInfo(request.method, request.target));
    }
    return api::errorResponse(api::ApiError::notFound(
        "not served here: /metrics, /healthz, /livez, /readyz, /debug/flags"));
  };
}

std::unique_ptr<server::DebugSocketServer> makeDebugSocket(
    const AdapterOptions& options, std::shared_ptr<const api::Router> router) {
  return std::make_unique<server::DebugSocketServer>(
      options.debug_socket_path, debugSocketHandler(options, std::move(router)));
}

}  // namespace metrics_adapter::app
