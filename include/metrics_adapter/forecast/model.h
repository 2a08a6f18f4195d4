#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

namespace metrics_adapter::forecast {

// Model options of a forecastRule; every default is safe for autoscaling.
struct ModelOptions {
  // Safety margin: the forecast is raised by this quantile of the model's own recent errors
  // (0.5: the median error, about no margin; 0.9: actual demand is above the forecast about one
  // step in ten). forecastRules[].quantile; in [0.5, 0.99].
  double quantile = 0.5;
};

enum class Method {
  kSeasonal,     // a detected daily or weekly rhythm, its profile and the current level
  kLatestValue,  // too little history or no rhythm: the latest actual value (a reactive HPA)
};

struct Forecast {
  Method method = Method::kLatestValue;
  // One line for `explain` and the observer page, e.g. "daily rhythm found in 7.0 days of
  // history" or "only 1.0 days of history; a forecast needs 2 days: serving the latest value".
  std::string why;
  std::chrono::seconds period{0};  // the rhythm used; 0 when none
  // The forecast at the time of the last history value t and at t + step, ..., t + horizon:
  // horizon_steps + 1 values.
  std::vector<double> values;
  double maximum = 0;  // max of values: the served value
};

// History of less than this cannot show a daily rhythm twice, the least the model needs.
inline constexpr std::chrono::hours kMinimumHistory{48};

// Forecasts `history` (one value per `step`, oldest first, the last at "now"; NaN where
// Prometheus had no value) `horizon_steps` steps ahead. Deterministic: the same history gives
// the same forecast on every replica. An empty history or one whose values are all NaN gives
// kLatestValue with NaN values, which the caller must not serve.
Forecast forecastAhead(std::span<const float> history, std::chrono::seconds step, int horizon_steps,
                       const ModelOptions& options);

}  // namespace metrics_adapter::forecast
