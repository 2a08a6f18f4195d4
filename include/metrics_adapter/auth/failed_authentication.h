#pragma once

#include <string>

#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::auth {

// The message upstream's audit log gives a refused authentication (apiserver filters
// getAuthMethods): "Authentication failed, attempted: " and the credentials the request carried,
// in this order: basic (an Authorization: Basic header of base64 "user:password"), bearer (an
// Authorization header whose first word is "bearer", any case, and that has a second),
// access_token (a non-blank access_token query parameter), x509 (a client certificate); or
// "Authentication failed, no credentials provided". Only called for a 401, so it may allocate.
std::string failedAuthenticationMessage(const server::HttpRequest& request);

}  // namespace metrics_adapter::auth
