#pragma once

#include <iosfwd>

#include "cli/explain/explain.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/prometheus/backend_set.h"

namespace metrics_adapter::cli {

// Explains an external request for the forecastRule `rule` as the server would answer it: the
// rule, one refresh through the server's forecast::ForecastService, and per series its latest
// value, the served forecast and why (a daily rhythm, or the latest value when the history is too
// short or shows no rhythm). Returns 0 when the request would succeed, 2 when it would fail.
int explainForecast(std::ostream& out, const ExplainOptions& options,
                    const config::ForecastRule& rule, const prometheus::Backend& backend);

}  // namespace metrics_adapter::cli
