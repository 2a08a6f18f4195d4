#include "app/access_log.h"

#include <string>

#include "metrics_adapter/logging/logging.h"

namespace metrics_adapter::app {

void logExchange(const server::Exchange& exchange) {
  if (!logging::accessLogged()) return;  // copy nothing
  logging::AccessEntry entry;
  entry.user = exchange.notes->user;
  // "-" for a request the server could not read (413, 431, malformed HTTP).
  entry.verb = exchange.method.empty() ? "-" : std::string(exchange.method);
  entry.target = exchange.target.empty() ? "-" : std::string(exchange.target);
  entry.code = exchange.code;
  entry.latency = exchange.latency;
  entry.remote = exchange.remote;
  entry.promql_time = exchange.notes->backend_time;
  logging::logAccess(entry);
}

}  // namespace metrics_adapter::app
