#include "metrics_adapter/auth/auth_filter.h"

#include <spdlog/spdlog.h>

#include "metrics_adapter/auth/failed_authentication.h"
#include "metrics_adapter/server/status.h"

namespace metrics_adapter::auth {
namespace {

server::HttpResponse status(int code, std::string_view reason, std::string_view message,
                            const std::optional<server::StatusDetails>& details = std::nullopt) {
  server::HttpResponse response;
  response.status = code;
  response.content_type = "application/json";
  response.body = server::statusJson(code, reason, message, details) + "\n";
  return response;
}

}  // namespace

AuthFilter::AuthFilter(std::shared_ptr<Authenticator> authenticator,
                       std::shared_ptr<Authorizer> authorizer)
    : authenticator_(std::move(authenticator)), authorizer_(std::move(authorizer)) {}

AuthFilter::Identity AuthFilter::authenticate(const server::HttpRequest& request,
                                              Reviews reviews) const {
  using Outcome = AuthenticationResult::Outcome;
  auto identity = authenticator_->authenticate(request, reviews);
  if (identity.outcome == Outcome::kNeedsReview) return NeedsReview{};
  if (identity.outcome == Outcome::kRejected) {
    SPDLOG_INFO("{} {}: authentication failed: {}", request.method, request.target,
                identity.reason);
    auto response = status(401, "Unauthorized", "Unauthorized");
    response.notes.failed_authentication = failedAuthenticationMessage(request);
    return response;
  }
  if (identity.outcome == Outcome::kUnavailable) {
    SPDLOG_WARN("{} {}: authentication unavailable: {}", request.method, request.target,
                identity.reason);
    return status(503, "ServiceUnavailable",
                  "authentication is temporarily unavailable: the token could not be reviewed");
  }
  return std::move(identity.user);
}

AuthFilter::Permission AuthFilter::authorize(const UserInfo& user,
                                             const server::HttpRequest& request,
                                             const server::RequestInfo& info,
                                             Reviews reviews) const {
  auto decision = authorizer_->authorize(user, info, reviews);
  using Outcome = AuthorizationResult::Outcome;
  if (decision.outcome == Outcome::kAllowed) return Allowed{std::move(decision.reason)};
  if (decision.outcome == Outcome::kNeedsReview) return NeedsReview{};
  if (decision.outcome == Outcome::kUnavailable) {
    SPDLOG_WARN("{} {}: authorization unavailable: {}", request.method, request.target,
                decision.reason);
    auto response = status(503, "ServiceUnavailable",
                           "authorization is temporarily unavailable: the access review failed");
    // Upstream's annotation when the authorizer failed without deciding (it answers 500).
    response.notes.decision_reason = "internal error";
    return response;
  }
  server::StatusDetails details;
  if (info.resource_request) {
    details = {.name = info.name, .group = info.api_group, .kind = info.resource};
  }
  auto response = status(403, "Forbidden", forbiddenMessage(user, info, decision.reason), details);
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.notes.decision = "forbid";
  response.notes.decision_reason = std::move(decision.reason);
  return response;
}

}  // namespace metrics_adapter::auth
