#pragma once

#include <chrono>
#include <span>
#include <vector>

// The methods the bench and the docs compare our model with (docs/forecasting.md). Same shape
// as forecastAhead's values: the forecast at the last history time and horizon_steps after it.
namespace metrics_adapter::forecast {

// The latest finite value of `history`; NaN when there is none. The "latest value" method, and
// the floor under every served forecast.
double latestFinite(std::span<const float> history);

// The value one `season` earlier (e.g. the same minute yesterday); the latest value when the
// history is shorter than a season.
std::vector<double> seasonalNaive(std::span<const float> history, std::chrono::seconds step,
                                  std::chrono::seconds season, int horizon_steps);

// Additive Holt-Winters (level, trend, season) with smoothing parameters chosen by a small grid
// search on the history's one-step errors; the latest value when shorter than two seasons.
std::vector<double> holtWinters(std::span<const float> history, std::chrono::seconds step,
                                std::chrono::seconds season, int horizon_steps);

// Holt-Winters' smoothing parameters: the grid search is 36 passes over the history, so callers
// that forecast at every step fit them once in a while and run one pass with them.
struct HoltWintersParameters {
  double alpha = 0.2;  // level
  double beta = 0.01;  // trend
  double gamma = 0.2;  // season
  bool operator==(const HoltWintersParameters&) const = default;
};

// The grid search's best parameters for `history` (the defaults when shorter than two seasons).
HoltWintersParameters fitHoltWinters(std::span<const float> history, std::chrono::seconds step,
                                     std::chrono::seconds season);

// The values holtWintersWith(history.first(t + 1), ...) forecasts, for every t in
// [first, history.size()), in one pass: horizon_steps + 1 values per t, one t after another.
std::vector<double> holtWintersCurves(std::span<const float> history, std::chrono::seconds step,
                                      std::chrono::seconds season, int horizon_steps,
                                      const HoltWintersParameters& parameters, std::size_t first);

// holtWinters with fixed parameters: one pass over the history.
std::vector<double> holtWintersWith(std::span<const float> history, std::chrono::seconds step,
                                    std::chrono::seconds season, int horizon_steps,
                                    const HoltWintersParameters& parameters);

}  // namespace metrics_adapter::forecast
