#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/prometheus/backend_set.h"

namespace metrics_adapter::cli {

// check-config with a Prometheus: warnings for forecastRules whose step is finer than their
// series' own sampling, read from the last hours of each rule's query at its step (a 5-minute
// scrape at a 1-minute step repeats each value five times; a 30-minute one leaves most steps
// empty). One warning per rule; a rule whose query fails says so.
std::vector<std::string> forecastSamplingWarnings(const config::AdapterConfig& config,
                                                  const prometheus::BackendSet& backends,
                                                  std::chrono::milliseconds timeout);

}  // namespace metrics_adapter::cli
