#include "metrics_adapter/forecast/range_fetch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace metrics_adapter::forecast {
namespace {

// The number of grid points start, start + step, ... that are <= end; requires end >= start.
std::size_t gridPointCount(Clock::time_point start, Clock::time_point end,
                           std::chrono::seconds step) {
  return static_cast<std::size_t>((end - start) / step) + 1;
}

// A Prometheus value as the grid stores it: finite doubles beyond float's range become ±Inf
// (converting them would be undefined behaviour); NaN and ±Inf stay what they are.
float toGridValue(double value) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  if (value > kFloatMax) return std::numeric_limits<float>::infinity();
  if (value < -kFloatMax) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(value);
}

double secondsSinceEpoch(Clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

}  // namespace

std::vector<TimeRange> planChunks(Clock::time_point start, Clock::time_point end,
                                  std::chrono::seconds step, std::size_t max_points) {
  if (step.count() <= 0) throw std::invalid_argument("planChunks: the step must be positive");
  if (max_points == 0) throw std::invalid_argument("planChunks: max_points must be positive");
  std::vector<TimeRange> chunks;
  if (end < start) return chunks;
  const std::size_t points = gridPointCount(start, end, step);
  chunks.reserve((points + max_points - 1) / max_points);
  for (std::size_t first = 0; first < points; first += max_points) {
    const std::size_t last = std::min(points, first + max_points) - 1;
    // Each chunk ends on its own last grid point, so the next one starts a step later.
    chunks.push_back(TimeRange{start + static_cast<long long>(first) * step,
                               start + static_cast<long long>(last) * step});
  }
  return chunks;
}

GridHistory fetchGridHistory(prometheus::PrometheusApi& prometheus, const std::string& promql,
                             Clock::time_point start, Clock::time_point end,
                             std::chrono::seconds step, std::chrono::milliseconds timeout,
                             std::size_t max_points) {
  const std::vector<TimeRange> chunks = planChunks(start, end, step, max_points);
  GridHistory history;
  history.start = start;
  history.step = step;
  history.length = chunks.empty() ? 0 : gridPointCount(start, end, step);
  if (chunks.empty()) return history;

  const double start_seconds = secondsSinceEpoch(start);
  const auto step_seconds = static_cast<double>(step.count());
  // The index a time snaps to is round(offset); only offsets within half a step of a grid point
  // inside [0, length) land, which also keeps NaN and huge times from reaching the conversion.
  const double highest_offset = static_cast<double>(history.length) - 0.5;

  std::map<std::map<std::string, std::string>, std::vector<float>> grid;
  for (const TimeRange& chunk : chunks) {
    prometheus::RangeResult answer = prometheus.queryRange(
        promql, chunk.start, chunk.end, std::chrono::milliseconds(step), timeout);
    for (prometheus::RangeSeries& series : answer.series) {
      auto [entry, inserted] = grid.try_emplace(std::move(series.labels));
      if (inserted) entry->second.assign(history.length, std::numeric_limits<float>::quiet_NaN());
      std::vector<float>& values = entry->second;
      const std::size_t points = std::min(series.times.size(), series.values.size());
      for (std::size_t i = 0; i < points; ++i) {
        const double offset = (series.times[i] - start_seconds) / step_seconds;
        if (!(offset > -0.5 && offset < highest_offset)) continue;
        // Two points near one grid point (not from Prometheus itself): the later one wins.
        values[static_cast<std::size_t>(std::round(offset))] = toGridValue(series.values[i]);
      }
    }
  }

  history.series.reserve(grid.size());
  for (auto& [labels, values] : grid) {
    history.series.push_back(GridSeries{labels, std::move(values)});
  }
  return history;
}

}  // namespace metrics_adapter::forecast
