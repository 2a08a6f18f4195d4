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
// with at most `max_points` grid points, in time order, no point twice. Each chunk starts and ends
// on a grid point (the last one ends on the last grid point <= end), and the next one starts one
// step after it. Empty when end < start. Throws std::invalid_argument for a step or max_points
// that is not positive.
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

// Fetches `promql` over [start, end] (start on the step grid) with planChunks' calls, one after
// the other in time order, each bounded by `timeout`, and lays every series that appears in any
// chunk onto the grid. A series is identified by its full label map. A point lands on the grid
// point nearest its time when that is less than step/2 away (points with no grid point that near
// are ignored); values beyond float's range become ±Inf, NaN and ±Inf stay. Holds `length`
// floats per series. Throws PrometheusError from the first call that fails (nothing is
// returned then), std::invalid_argument as planChunks does.
GridHistory fetchGridHistory(prometheus::PrometheusApi& prometheus, const std::string& promql,
                             Clock::time_point start, Clock::time_point end,
                             std::chrono::seconds step, std::chrono::milliseconds timeout,
                             std::size_t max_points = kMaxPointsPerQuery);

}  // namespace metrics_adapter::forecast
