#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "metrics_adapter/forecast/model.h"

namespace metrics_adapter::forecast {

// A forecaster: forecast values at the last history time and horizon_steps after it.
using Forecaster =
    std::function<std::vector<double>(std::span<const float> history, int horizon_steps)>;

// Our model (forecastAhead) with `options`, as a Forecaster.
Forecaster modelForecaster(std::chrono::seconds step, ModelOptions options);

struct BacktestOptions {
  std::chrono::seconds step{60};
  int horizon_steps = 10;
  std::size_t history_steps = 7 * 24 * 60;  // at most this much history before each step
  std::optional<double> threshold;          // for lead times of upward crossings
};

// One replayed step t.
struct BacktestPoint {
  std::size_t index = 0;  // t, as an index into the replayed series
  double actual = 0;      // the actual value at t
  double forecast = 0;    // the served value at t: max of the forecast over [t, t + horizon]
  double actual_max = 0;  // the actual maximum over [t, t + horizon]
};

struct BacktestResult {
  // Mean of |forecast - actual_max| / actual_max over the points with actual_max > 0, as a
  // fraction (0.08 = 8 %).
  double mape = 0;
  double under_forecast_ratio = 0;  // share of points with forecast < actual_max
  // Median over upward crossings of `threshold` by the actual series of how long before the
  // actual crossing the served forecast crossed; nullopt without a threshold or a crossing.
  std::optional<double> lead_time_seconds;
  std::vector<double> lead_times_seconds;  // each crossing's lead (negative: forecast was late)
  std::vector<BacktestPoint> points;
};

// Replays `series` from index `first` to the last index that still has a whole horizon after
// it: at each t, `forecaster` sees only series[max(0, t+1-history_steps) .. t] and is compared
// with the actual maximum over [t, t + horizon]. Steps whose actual value is NaN are skipped.
BacktestResult backtest(std::span<const float> series, std::size_t first,
                        const BacktestOptions& options, const Forecaster& forecaster);

}  // namespace metrics_adapter::forecast
