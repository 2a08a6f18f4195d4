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
  std::size_t history_steps =
      std::size_t{7} * 24 * 60;     // at most this much history before each step
  std::optional<double> threshold;  // for lead times of upward crossings
  // How many steps old the history is when the served value is read (servingLagSteps): the
  // forecast served at t is made at t - lag_steps and serves its maximum over [t, t + horizon].
  std::size_t lag_steps = 0;
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
  //
  // A crossing is a replayed step t_a > first with actual[t_a - 1] < V <= actual[t_a] (V the
  // threshold) after the actual stayed below V at every step of [t_a - horizon, t_a - 1] (NaN
  // steps ignored): a rise from below, so noise flapping around V counts once. Its lead is
  // t_a - t_f steps (times step): t_f is the first step of the first run of consecutive replayed
  // steps with served forecast >= V that ends at or after t_a. So when the forecast is >= V at
  // t_a, t_f is where that run began, but no earlier than `first` nor than the step after the
  // actual's last value >= V before t_a (the lead counts only while the actual was below V);
  // otherwise t_f is the first later step with forecast >= V (lead < 0), or one step after the
  // last replayed step when there is none (the forecast was late by at least the rest of the
  // replay). A skipped step (NaN actual or forecast) ends a run.
  std::optional<double> lead_time_seconds;
  std::vector<double> lead_times_seconds;  // each crossing's lead (negative: forecast was late)
  std::vector<BacktestPoint> points;
};

// Replays `series` from index `first` (at least lag_steps) to the last index that still has a
// whole horizon after it: at each t, `forecaster` sees only the history up to o = t - lag_steps
// (series[max(0, o+1-history_steps) .. o]), is asked for horizon_steps + lag_steps steps, and the
// maximum of its values from index lag_steps on (over [t, t + horizon]; NaN ignored) is compared
// with the actual maximum over [t, t + horizon]. Steps whose actual value is NaN, or whose served
// forecast is NaN, are skipped.
BacktestResult backtest(std::span<const float> series, std::size_t first,
                        const BacktestOptions& options, const Forecaster& forecaster);

}  // namespace metrics_adapter::forecast
