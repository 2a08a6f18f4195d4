#pragma once

#include <memory>
#include <optional>

#include "metrics_adapter/auth/authenticator.h"
#include "metrics_adapter/auth/authorizer.h"
#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::app {

// Authenticates and authorizes every request before it reaches the router. check() returns
// nullopt to let the request through, or the 401/403/503 Status answer. Thread-safe.
class AuthFilter {
 public:
  AuthFilter(std::shared_ptr<auth::Authenticator> authenticator,
             std::shared_ptr<auth::Authorizer> authorizer);

  // `user_name`, when given, receives who the caller turned out to be (for the access log).
  std::optional<server::HttpResponse> check(const server::HttpRequest& request,
                                            std::string* user_name = nullptr) const;

 private:
  std::shared_ptr<auth::Authenticator> authenticator_;
  std::shared_ptr<auth::Authorizer> authorizer_;
};

}  // namespace metrics_adapter::app
