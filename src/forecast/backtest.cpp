#include "metrics_adapter/forecast/backtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace metrics_adapter::forecast {
namespace {

constexpr double kBacktestNaN = std::numeric_limits<double>::quiet_NaN();

// Max of the finite values; NaN when there is none.
template <typename Range>
double backtestMaxOf(const Range& values) {
  double result = kBacktestNaN;
  for (const auto v : values) {
    if (std::isfinite(v) && !(v <= result)) result = static_cast<double>(v);
  }
  return result;
}

// The lead of every counted upward crossing of `threshold` (see BacktestResult).
std::vector<double> backtestLeads(std::span<const float> series, std::size_t first,
                                  const BacktestOptions& options,
                                  const std::vector<BacktestPoint>& points, double threshold) {
  std::vector<double> leads;
  if (points.empty()) return leads;
  // The served forecast by replayed index, NaN where a step was skipped.
  const std::size_t last = points.back().index;
  std::vector<double> served(last + 1 - first, kBacktestNaN);
  for (const BacktestPoint& p : points) served[p.index - first] = p.forecast;
  const auto above = [&](std::size_t t) { return served[t - first] >= threshold; };
  const auto horizon = static_cast<std::size_t>(std::max(0, options.horizon_steps));
  const auto step_seconds = static_cast<double>(options.step.count());

  for (const BacktestPoint& p : points) {
    const std::size_t t = p.index;
    if (t == 0 || t == first || !(p.actual >= threshold)) continue;
    // A rise from below: the actual stayed below the threshold for a whole horizon before t.
    bool rose = true;
    for (std::size_t i = t - std::min(t, std::max<std::size_t>(1, horizon)); i < t; ++i) {
      if (series[i] >= threshold) rose = false;
    }
    if (!rose || !(series[t - 1] < threshold)) continue;
    double lead_steps = 0;
    if (above(t)) {
      // The lead counts only while the actual was below: the run is cut after the actual's last
      // step at or above the threshold before t.
      std::size_t floor = t - 1;
      while (floor > 0 && !(series[floor - 1] >= threshold)) --floor;
      std::size_t start = t;
      while (start > std::max(first, floor) && above(start - 1)) --start;
      lead_steps = static_cast<double>(t - start);
    } else {
      std::size_t later = t + 1;
      while (later <= last && !above(later)) ++later;
      lead_steps = -static_cast<double>(later - t);
    }
    leads.push_back(lead_steps * step_seconds);
  }
  return leads;
}

double backtestMedian(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

Forecaster modelForecaster(std::chrono::seconds step, ModelOptions options) {
  return [step, options](std::span<const float> history, int horizon_steps) {
    return forecastAhead(history, step, horizon_steps, options).values;
  };
}

BacktestResult backtest(std::span<const float> series, std::size_t first,
                        const BacktestOptions& options, const Forecaster& forecaster) {
  BacktestResult result;
  const auto horizon = static_cast<std::size_t>(std::max(0, options.horizon_steps));
  const std::size_t history_steps = std::max<std::size_t>(1, options.history_steps);
  double error_sum = 0;
  std::size_t error_count = 0;
  std::size_t under = 0;
  const std::size_t lag = options.lag_steps;
  for (std::size_t t = std::max(first, lag); t + horizon < series.size(); ++t) {
    if (!std::isfinite(series[t])) continue;
    const std::size_t origin = t - lag;
    const std::size_t begin = origin + 1 > history_steps ? origin + 1 - history_steps : 0;
    const std::vector<double> values = forecaster(series.subspan(begin, origin + 1 - begin),
                                                  options.horizon_steps + static_cast<int>(lag));
    BacktestPoint point;
    point.index = t;
    point.actual = series[t];
    point.forecast = values.size() > lag ? backtestMaxOf(std::span(values).subspan(
                                               lag, std::min(values.size() - lag, horizon + 1)))
                                         : kBacktestNaN;
    point.actual_max = backtestMaxOf(series.subspan(t, horizon + 1));
    if (std::isnan(point.forecast)) continue;
    if (point.forecast < point.actual_max) ++under;
    if (point.actual_max > 0) {
      error_sum += std::abs(point.forecast - point.actual_max) / point.actual_max;
      ++error_count;
    }
    result.points.push_back(point);
  }
  if (error_count > 0) result.mape = error_sum / static_cast<double>(error_count);
  if (!result.points.empty()) {
    result.under_forecast_ratio =
        static_cast<double>(under) / static_cast<double>(result.points.size());
  }
  if (options.threshold) {
    result.lead_times_seconds =
        backtestLeads(series, std::max(first, lag), options, result.points, *options.threshold);
    if (!result.lead_times_seconds.empty()) {
      result.lead_time_seconds = backtestMedian(result.lead_times_seconds);
    }
  }
  return result;
}

}  // namespace metrics_adapter::forecast
