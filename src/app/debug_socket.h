#pragma once

#include <memory>

#include "metrics_adapter/api/router.h"
#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/server/debug_socket.h"

namespace metrics_adapter::app {

// What --debug-socket-path serves, without authentication (upstream serves its debug handlers
// there): GET /metrics and the health paths (/healthz, /livez, /readyz and their checks) as
// the HTTPS port does; GET /debug/flags, the flags given, one "--name=value" a line, secrets
// redacted; PUT /debug/flags/v with a number as the body sets --v at run time, as upstream's
// /debug/flags/v does. Anything else is 404; refusals are Kubernetes Status bodies.
server::RequestHandler debugSocketHandler(const AdapterOptions& options,
                                          std::shared_ptr<const api::Router> router);

std::unique_ptr<server::DebugSocketServer> makeDebugSocket(
    const AdapterOptions& options, std::shared_ptr<const api::Router> router);

// The "--name=value" lines of /debug/flags: values of flags that may carry credentials
// (--prometheus-header's value after the name) are REDACTED.
std::string renderGivenFlags(const AdapterOptions& options);

}  // namespace metrics_adapter::app
