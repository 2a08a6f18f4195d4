#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::forecast {

using Clock = prometheus::Clock;

// Prometheus refuses a query_range answer of more than 11,000 points per series.
inline constexpr std::size_t kMaxPointsPerQuery = 11000;

struct TimeRange {
  Clock::time_point start;  // inclusive
  Clock::time_point end;    // inclusive
};

// The query_range calls that cover [start, end] on the grid start, start + step, ...: each
// with at most `max_points` grid points, in time order, no point twice. Empty when end < start.
std::vector<TimeRange> planChunks(Clock::time_point start, Clock::time_point end,
                                  std::chrono::seconds step,
                                  std::size_t max_points = kMaxPointsPerQuery);

// One series on the grid: values[i] is the value at start + i * step; NaN where the answer had
// no point.
struct GridSeries {
  std::map<std::string, std::string> labels;
  std::vector<float> values;
};

struct GridHistory {
  Clock::time_point start;
  std::chrono::seconds step{60};
  std::size_t length = 0;          // grid points from start; every series has this many values
  std::vector<GridSeries> series;  // sorted by labels
};

// Fetches `promql` over [start, end] (start on the step grid) with planChunks' calls and lays
// every series that appears in any chunk onto the grid. Throws PrometheusError.
GridHistory fetchGridHistory(prometheus::PrometheusApi& prometheus, const std::string& promql,
                             Clock::time_point start, Clock::time_point end,
                             std::chrono::seconds step, std::chrono::milliseconds timeout,
                             std::size_t max_points = kMaxPointsPerQuery);

}  // namespace metrics_adapter::forecast
