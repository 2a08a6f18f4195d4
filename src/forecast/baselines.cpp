#include "metrics_adapter/forecast/baselines.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace metrics_adapter::forecast {
namespace {

constexpr double kBaselineNaN = std::numeric_limits<double>::quiet_NaN();

std::size_t baselineSeasonSteps(std::chrono::seconds step, std::chrono::seconds season) {
  if (step.count() <= 0) return 0;
  return static_cast<std::size_t>(std::max<std::int64_t>(
      0, std::llround(static_cast<double>(season.count()) / static_cast<double>(step.count()))));
}

std::vector<double> baselineConstant(double value, int horizon_steps) {
  return std::vector<double>(static_cast<std::size_t>(std::max(0, horizon_steps)) + 1, value);
}

// The state after a pass over the history, and the sum of squared one-step errors.
struct HoltWintersState {
  double level = 0;
  double trend = 0;
  std::vector<double> season;
  double squared_errors = 0;
};

double baselineMeanOf(std::span<const float> values) {
  double sum = 0;
  std::size_t count = 0;
  for (const float v : values) {
    if (std::isfinite(v)) {
      sum += v;
      ++count;
    }
  }
  return count == 0 ? kBaselineNaN : sum / static_cast<double>(count);
}

// Initial state from the first two seasons: level and trend from their means, the season from
// the first one's deviations.
HoltWintersState holtWintersStart(std::span<const float> history, std::size_t period) {
  HoltWintersState state;
  const double first = baselineMeanOf(history.first(period));
  const double second = baselineMeanOf(history.subspan(period, period));
  state.level = first;
  state.trend = std::isfinite(second) ? (second - first) / static_cast<double>(period) : 0;
  state.season.resize(period);
  for (std::size_t i = 0; i < period; ++i) {
    state.season[i] = std::isfinite(history[i]) ? history[i] - first : 0;
  }
  return state;
}

HoltWintersState holtWintersRun(std::span<const float> history, std::size_t period,
                                HoltWintersState state, const HoltWintersParameters& p) {
  std::size_t phase = 0;
  for (std::size_t i = period; i < history.size(); ++i) {
    double& season = state.season[phase];
    const double previous_level = state.level;
    const double predicted = previous_level + state.trend + season;
    const float x = history[i];
    if (std::isfinite(x)) {
      const double error = x - predicted;
      state.squared_errors += error * error;
      state.level = p.alpha * (x - season) + (1 - p.alpha) * (previous_level + state.trend);
      state.trend = p.beta * (state.level - previous_level) + (1 - p.beta) * state.trend;
      season = p.gamma * (x - state.level) + (1 - p.gamma) * season;
    } else {
      state.level = previous_level + state.trend;
    }
    if (++phase == period) phase = 0;
  }
  return state;
}

}  // namespace

double latestFinite(std::span<const float> history) {
  const auto it =
      std::find_if(history.rbegin(), history.rend(), [](float v) { return std::isfinite(v); });
  return it == history.rend() ? kBaselineNaN : static_cast<double>(*it);
}

std::vector<double> seasonalNaive(std::span<const float> history, std::chrono::seconds step,
                                  std::chrono::seconds season, int horizon_steps) {
  const std::size_t period = baselineSeasonSteps(step, season);
  const double latest = latestFinite(history);
  std::vector<double> values = baselineConstant(latest, horizon_steps);
  const std::size_t n = history.size();
  if (period == 0 || n < period) return values;
  for (std::size_t h = 0; h < values.size(); ++h) {
    // The value at t + h - period, or at t + h - k * period for the first k inside the history.
    const auto season_steps = static_cast<std::ptrdiff_t>(period);
    auto index = static_cast<std::ptrdiff_t>(n - 1 + h) - season_steps;
    while (index >= static_cast<std::ptrdiff_t>(n)) index -= season_steps;
    if (index >= 0 && std::isfinite(history[static_cast<std::size_t>(index)])) {
      values[h] = history[static_cast<std::size_t>(index)];
    }
  }
  return values;
}

HoltWintersParameters fitHoltWinters(std::span<const float> history, std::chrono::seconds step,
                                     std::chrono::seconds season) {
  const std::size_t period = baselineSeasonSteps(step, season);
  HoltWintersParameters best_parameters;
  if (period == 0 || history.size() < 2 * period) return best_parameters;
  const HoltWintersState start = holtWintersStart(history, period);
  if (!std::isfinite(start.level)) return best_parameters;
  constexpr std::array kAlphas{0.05, 0.2, 0.5, 0.8};
  constexpr std::array kBetas{0.0, 0.01, 0.1};
  constexpr std::array kGammas{0.05, 0.2, 0.5};
  double best_errors = std::numeric_limits<double>::infinity();
  for (const double alpha : kAlphas) {
    for (const double beta : kBetas) {
      for (const double gamma : kGammas) {
        const HoltWintersParameters parameters{alpha, beta, gamma};
        const double errors = holtWintersRun(history, period, start, parameters).squared_errors;
        if (errors < best_errors) {
          best_errors = errors;
          best_parameters = parameters;
        }
      }
    }
  }
  return best_parameters;
}

std::vector<double> holtWintersWith(std::span<const float> history, std::chrono::seconds step,
                                    std::chrono::seconds season, int horizon_steps,
                                    const HoltWintersParameters& parameters) {
  const std::size_t period = baselineSeasonSteps(step, season);
  std::vector<double> values = baselineConstant(latestFinite(history), horizon_steps);
  if (period == 0 || history.size() < 2 * period) return values;
  const HoltWintersState start = holtWintersStart(history, period);
  if (!std::isfinite(start.level)) return values;
  const HoltWintersState state = holtWintersRun(history, period, start, parameters);
  // Season slot of history index i is (i - period) % period == i % period.
  const std::size_t last = history.size() - 1;
  for (std::size_t h = 0; h < values.size(); ++h) {
    values[h] =
        state.level + static_cast<double>(h) * state.trend + state.season[(last + h) % period];
  }
  return values;
}

std::vector<double> holtWintersCurves(std::span<const float> history, std::chrono::seconds step,
                                      std::chrono::seconds season, int horizon_steps,
                                      const HoltWintersParameters& parameters, std::size_t first) {
  const std::size_t period = baselineSeasonSteps(step, season);
  const std::size_t width = static_cast<std::size_t>(std::max(0, horizon_steps)) + 1;
  const std::size_t n = history.size();
  std::vector<double> curves(n > first ? (n - first) * width : 0, kBaselineNaN);
  double latest = kBaselineNaN;
  const bool seasonal = period > 0 && n >= 2 * period;
  HoltWintersState state;
  if (seasonal) state = holtWintersStart(history, period);
  const bool started = seasonal && std::isfinite(state.level);
  std::size_t phase = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = history[i];
    if (std::isfinite(x)) latest = x;
    // The same update as holtWintersRun, one index at a time.
    if (started && i >= period) {
      double& slot = state.season[phase];
      const double previous_level = state.level;
      if (std::isfinite(x)) {
        state.level =
            parameters.alpha * (x - slot) + (1 - parameters.alpha) * (previous_level + state.trend);
        state.trend =
            parameters.beta * (state.level - previous_level) + (1 - parameters.beta) * state.trend;
        slot = parameters.gamma * (x - state.level) + (1 - parameters.gamma) * slot;
      } else {
        state.level = previous_level + state.trend;
      }
      if (++phase == period) phase = 0;
    }
    if (i < first) continue;
    double* curve = curves.data() + (i - first) * width;
    const bool forecasts = started && i + 1 >= 2 * period;
    for (std::size_t h = 0; h < width; ++h) {
      curve[h] = forecasts ? state.level + static_cast<double>(h) * state.trend +
                                 state.season[(i + h) % period]
                           : latest;
    }
  }
  return curves;
}

std::vector<double> holtWinters(std::span<const float> history, std::chrono::seconds step,
                                std::chrono::seconds season, int horizon_steps) {
  return holtWintersWith(history, step, season, horizon_steps,
                         fitHoltWinters(history, step, season));
}

}  // namespace metrics_adapter::forecast
