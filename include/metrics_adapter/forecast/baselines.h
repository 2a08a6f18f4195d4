#pragma once

#include <chrono>
#include <span>
#include <vector>

// The methods the bench and the docs compare our model with (docs/forecasting.md). Same shape
// as forecastAhead's values: the forecast at the last history time and horizon_steps after it.
namespace metrics_adapter::forecast {

// The value one `season` earlier (e.g. the same minute yesterday); the latest value when the
// history is shorter than a season.
std::vector<double> seasonalNaive(std::span<const float> history, std::chrono::seconds step,
                                  std::chrono::seconds season, int horizon_steps);

// Additive Holt-Winters (level, trend, season) with smoothing parameters chosen by a small grid
// search on the history's one-step errors; the latest value when shorter than two seasons.
std::vector<double> holtWinters(std::span<const float> history, std::chrono::seconds step,
                                std::chrono::seconds season, int horizon_steps);

}  // namespace metrics_adapter::forecast
