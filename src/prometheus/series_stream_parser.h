#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::prometheus {

struct SeriesAnswer {
  std::size_t series = 0;             // how many times the visitor was called
  std::vector<std::string> warnings;  // Prometheus's "warnings", the first few
};

// Reads a /api/v1/series answer from `in` chunk by chunk (SeriesScanner) and calls `visitor` for
// each series as soon as its object is complete; label values other than __name__ are never stored.
// `on_token` runs after every JSON token (the body reader uses it to bound how much input a single
// token may span). `data: null` is an empty answer. Throws PrometheusError: kApiError for
// {"status":"error"}, kBadResponse for anything that is not a series answer. Exceptions thrown
// by `visitor` propagate unchanged.
SeriesAnswer parseSeriesStream(std::istream& in, const SeriesVisitor& visitor,
                               const std::function<void()>& on_token = {});

}  // namespace metrics_adapter::prometheus
