#pragma once

#include <iosfwd>

#include "metrics_adapter/app/flags.h"

namespace metrics_adapter::cli {

// `metrics-adapter --dry-run <the server's flags>`: after parseFlags, checks what the server
// would check before serving, without binding a port or calling Prometheus or Kubernetes:
// the config file loads and compiles (against the built-in REST mapping), the Prometheus
// client options are valid and its files readable, every kubeconfig loads, the client CA
// files hold certificates, the TLS policy is valid, the serving certificate and key load,
// match and make a server context, and the bind address parses.
//
// Every file a flag names must be readable: a missing one is an error, so run it where the
// files are (in the container, or with the paths pointed at local copies). The one thing not
// checked is what only exists in a pod: the in-cluster service account, when no kubeconfig is
// given, is noted in the summary and checked when the server starts.
//
// Prints one summary line to `out` and returns 0, or prints every problem found (one per line)
// to `err` and returns 1. Warnings (rules disabled offline, a certificate outside its validity
// period) go to `out` before the summary.
int runDryRun(const app::AdapterOptions& options, std::ostream& out, std::ostream& err);

}  // namespace metrics_adapter::cli
