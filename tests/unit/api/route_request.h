#pragma once

#include "metrics_adapter/api/router.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::testing {

// What `router` answers for `request`, past the pipeline's parse stage (no auth, no accounting).
inline server::HttpResponse routeRequest(const api::Router& router,
                                         const server::HttpRequest& request) {
  return router.route(request, server::parseRequestInfo(request.method, request.target));
}

}  // namespace metrics_adapter::testing
