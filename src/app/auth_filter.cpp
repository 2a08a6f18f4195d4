#include "app/auth_filter.h"

#include <spdlog/spdlog.h>

#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::app {
namespace {

server::HttpResponse status(int code, const std::string& reason, const std::string& message,
                            const api::Json& details = nullptr) {
  server::HttpResponse response;
  response.status = code;
  response.content_type = "application/json";
  // Names and paths come from the client and may be invalid UTF-8: replace, never throw.
  response.body = api::statusObject(code, reason, message, details)
                      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                  "\n";
  return response;
}

}  // namespace

AuthFilter::AuthFilter(std::shared_ptr<auth::Authenticator> authenticator,
                       std::shared_ptr<auth::Authorizer> authorizer)
    : authenticator_(std::move(authenticator)), authorizer_(std::move(authorizer)) {}

std::optional<server::HttpResponse> AuthFilter::check(const server::HttpRequest& request,
                                                      std::string* user_name) const {
  using AuthnOutcome = auth::AuthenticationResult::Outcome;
  auto identity = authenticator_->authenticate(request);
  if (user_name) *user_name = identity.user.name;
  if (identity.outcome == AuthnOutcome::kRejected) {
    spdlog::info("{} {}: authentication failed: {}", request.method, request.target,
                 identity.reason);
    return status(401, "Unauthorized", "Unauthorized");
  }
  if (identity.outcome == AuthnOutcome::kUnavailable) {
    spdlog::warn("{} {}: authentication unavailable: {}", request.method, request.target,
                 identity.reason);
    return status(503, "ServiceUnavailable",
                  "authentication is temporarily unavailable: the token could not be reviewed");
  }

  auto attributes = auth::requestAttributes(request.method, request.target);
  auto decision = authorizer_->authorize(identity.user, attributes);
  using AuthzOutcome = auth::AuthorizationResult::Outcome;
  if (decision.outcome == AuthzOutcome::kAllowed) return std::nullopt;
  if (decision.outcome == AuthzOutcome::kUnavailable) {
    spdlog::warn("{} {}: authorization unavailable: {}", request.method, request.target,
                 decision.reason);
    return status(503, "ServiceUnavailable",
                  "authorization is temporarily unavailable: the access review failed");
  }
  api::Json details = api::Json::object();
  if (attributes.resource_request) {
    details = {
        {"name", attributes.name}, {"group", attributes.api_group}, {"kind", attributes.resource}};
  }
  auto response =
      status(403, "Forbidden", auth::forbiddenMessage(identity.user, attributes, decision.reason),
             details);
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return response;
}

}  // namespace metrics_adapter::app
