#pragma once

#include <memory>
#include <optional>
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
  AuthFilter(std::shared_ptr<Authenticator> authenticator, std::shared_ptr<Authorizer> authorizer);

  // Who the caller is, or the 401 (rejected credentials) / 503 (review unavailable) answer.
  std::variant<UserInfo, server::HttpResponse> authenticate(
      const server::HttpRequest& request) const;

  // nullopt when `user` may do what `info` asks, else the 403 (denied) / 503 answer.
  std::optional<server::HttpResponse> authorize(const UserInfo& user,
                                                const server::HttpRequest& request,
                                                const server::RequestInfo& info) const;

 private:
  std::shared_ptr<Authenticator> authenticator_;
  std::shared_ptr<Authorizer> authorizer_;
};

}  // namespace metrics_adapter::auth
