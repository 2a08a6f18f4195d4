#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "metrics_adapter/auth/authenticator.h"
#include "metrics_adapter/auth/authorizer.h"
#include "metrics_adapter/server/https_server.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::auth {

// The authenticate and authorize stages of the request pipeline (delegated to the Kubernetes
// API: TokenReview, SubjectAccessReview, front-proxy and client certificates). Each stage lets
// the request through or answers it with a Kubernetes Status. Thread-safe.
class AuthFilter {
 public:
  // With Reviews::kCachedOnly: the stage would have to ask the Kubernetes API.
  struct NeedsReview {};
  struct Allowed {
    std::string reason;  // the authorizer's, for the audit log; "" when it gave none
  };
  using Identity = std::variant<UserInfo, server::HttpResponse, NeedsReview>;
  using Permission = std::variant<Allowed, server::HttpResponse, NeedsReview>;

  AuthFilter(std::shared_ptr<Authenticator> authenticator, std::shared_ptr<Authorizer> authorizer);

  // Who the caller is, or the 401 (rejected credentials; its notes carry the audit message,
  // failed_authentication) / 503 (review unavailable) answer.
  Identity authenticate(const server::HttpRequest& request,
                        Reviews reviews = Reviews::kMayAsk) const;

  // Whether `user` may do what `info` asks, else the 403 (denied) / 503 answer, whose notes
  // carry the decision and its reason for the audit log (the 503: reason "internal error").
  Permission authorize(const UserInfo& user, const server::HttpRequest& request,
                       const server::RequestInfo& info, Reviews reviews = Reviews::kMayAsk) const;

 private:
  std::shared_ptr<Authenticator> authenticator_;
  std::shared_ptr<Authorizer> authorizer_;
};

}  // namespace metrics_adapter::auth
