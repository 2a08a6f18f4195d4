#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/forecast/sampling.h"

namespace metrics_adapter::forecast {

// Model options of a forecastRule; every default is safe for autoscaling.
struct ModelOptions {
  // Safety margin: the forecast is raised by this quantile of the model's own recent errors
  // (0.5: the median error, about no margin; 0.9: actual demand is above the forecast about one
  // step in ten). forecastRules[].quantile; in [0.5, 0.99].
  double quantile = 0.5;
  // Grid steps between the series' own samples (a 5-minute scrape on a 1-minute grid: 5): the
  // noise margin counts one independent value per sample, not one per step.
  std::size_t sample_spacing_steps = 1;
};

enum class Method {
  kSeasonal,           // our model: a detected daily or weekly rhythm, its profile and level
  kLatestValue,        // the latest actual value (a reactive HPA)
  kSeasonalNaiveDay,   // the value one day earlier
  kSeasonalNaiveWeek,  // the value one week earlier
  kHoltWinters,        // additive Holt-Winters with a daily season
  // Seasonal naive (1d) and Holt-Winters combined, each raised to at least the latest value:
  kCombinedLow,   // the lower of the two (a rise both expect)
  kCombinedMean,  // their mean
};

// A short stable name for reports and JSON: "model", "latestValue", "seasonalNaive1d",
// "seasonalNaive7d", "holtWinters", "combinedLow", "combinedMean".
std::string_view methodKey(Method method);
// For people: "rhythm model", "latest value", "seasonal naive (1d)", ...
std::string_view methodTitle(Method method);

// A method's figures over the recent steps it was scored on (the method selection).
struct MethodScore {
  Method method = Method::kLatestValue;
  double mape = 0;                  // as BacktestResult::mape
  double under_forecast_ratio = 0;  // as BacktestResult::under_forecast_ratio
  std::size_t points = 0;           // scored steps
};

struct Forecast {
  Method method = Method::kLatestValue;
  // One line for `explain` and the observer page, e.g. "daily rhythm found in 7.0 days of
  // history" or "only 1.0 days of history; a forecast needs 2 days: serving the latest value".
  std::string why;
  std::chrono::seconds period{0};  // the rhythm used; 0 when none
  // The forecast at the time of the last history value t and at t + step, ..., t + horizon:
  // horizon_steps + 1 values (lead_steps more when forecastWith was asked for a lead).
  std::vector<double> values;
  double maximum = 0;  // max of values: the served value (windows[0] when there are windows)
  // windows[k]: the served value for the window that starts k steps after t, the maximum of the
  // forecast over [t + k step, t + (k + horizon) step], never below the latest value. Filled by
  // forecastWith, k = 0 .. lead_steps: a value computed at one refresh is read until the next,
  // and the window must start at the time of each read, not at t.
  std::vector<double> windows;
  // The same windows before any floor at the latest value: a read raises them to the freshest
  // value it knows (servedAt). For a combination, the window maxima of its two methods, seasonal
  // naive (1d) and Holt-Winters, each raised to that value before they are combined.
  std::vector<double> unfloored_windows;
  std::vector<std::pair<double, double>> combined_parts;
  // The methods scored by the selection that chose `method`, best first; empty when the
  // forecast came from one method without a selection.
  std::vector<MethodScore> scores;
  Sampling sampling;  // the series' own spacing as the selection read it (samples 0: not read)
  // Forecast on the series' own samples (Selection::on_samples): a window that holds the due
  // time of a sample serves that sample's forecast, any other the value current at its start.
  bool on_samples = false;
  // With on_samples: grid steps from the history's end to the time the next sample is due, 1 to
  // the spacing (a sample not seen at its time is taken for a repeat of the one before, as
  // nativeSamples says); nullopt when the history has no sample.
  std::optional<std::int64_t> next_sample_due;
  int horizon_steps = 0;  // with on_samples: the steps each window spans after its start
  // A positive served value below this (a thousandth of the history's largest value) serves 0:
  // a model's residue over a night of zeros, not demand, and any value above 0 keeps an HPA
  // with minReplicas: 0 at one replica (ceil(value / target)). 0: no such snap.
  double negligible = 0;
};

// The share of a series' largest value below which a positive forecast serves 0
// (Forecast::negligible).
inline constexpr double kNegligibleShare = 1e-3;

// History of less than this cannot show a daily rhythm twice, the least the model needs.
inline constexpr std::chrono::hours kMinimumHistory{48};

// Forecasts `history` (one value per `step`, oldest first, the last at "now"; NaN where
// Prometheus had no value) `horizon_steps` steps ahead. Deterministic: the same history gives
// the same forecast on every replica. An empty history or one whose values are all NaN gives
// kLatestValue with NaN values, which the caller must not serve.
Forecast forecastAhead(std::span<const float> history, std::chrono::seconds step, int horizon_steps,
                       const ModelOptions& options);

}  // namespace metrics_adapter::forecast
