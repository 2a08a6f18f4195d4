#pragma once

#include "metrics_adapter/server/exchange_observer.h"

namespace metrics_adapter::app {

// The access log of the request pipeline: one logging::logAccess line per exchange the server
// answered (visible from --v=6, as upstream's per-request lines).
void logExchange(const server::Exchange& exchange);

}  // namespace metrics_adapter::app
