#include "metrics_adapter/forecast/model.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <span>
#include <utility>
#include <vector>

#include "forecast/rhythm.h"
#include "forecast/robust_stats.h"

namespace metrics_adapter::forecast {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Each cycle contributes the values this close to the forecast phase to the profile's median:
// noise is smoothed, and a ramp, locally straight, keeps its median at the centre.
constexpr std::chrono::seconds kPhaseWindow{3 * 60};
// The current level is the median deviation from the profile over the last two hours (quiet)...
constexpr std::chrono::seconds kLevelWindow{2 * 3600};
// ...unless the median of the last 15 minutes differs from it by more than noise explains: then
// the level has shifted, and the model follows it within about 8 minutes.
constexpr std::chrono::seconds kShiftWindow{15 * 60};
constexpr double kShiftSigmas = 3.0;
// The margin is a quantile of the errors the model would have made over this recent time, at
// every kErrorStride-th step (neighbours' errors overlap in time anyway).
constexpr std::chrono::seconds kErrorWindow{4 * 3600};
constexpr std::size_t kErrorStride = 4;

constexpr double kMinQuantile = 0.5;
constexpr double kMaxQuantile = 0.99;

// `duration` in whole steps (rounded), at least `minimum`.
std::size_t modelSteps(std::chrono::seconds duration, std::chrono::seconds step,
                       std::size_t minimum) {
  const auto steps =
      std::llround(static_cast<double>(duration.count()) / static_cast<double>(step.count()));
  return std::max(minimum, static_cast<std::size_t>(std::max<std::int64_t>(0, steps)));
}

double modelDays(std::size_t steps, std::chrono::seconds step) {
  return static_cast<double>(steps) * static_cast<double>(step.count()) / 86400.0;
}

std::string modelPeriodName(std::chrono::seconds period) {
  if (period == rhythm::kWeek) return "weekly rhythm (7d)";
  if (period == rhythm::kDay) return "daily rhythm (24h)";
  return fmt::format("rhythm ({}s)", period.count());
}

}  // namespace

std::string_view methodKey(Method method) {
  switch (method) {
    case Method::kSeasonal:
      return "model";
    case Method::kLatestValue:
      return "latestValue";
    case Method::kSeasonalNaiveDay:
      return "seasonalNaive1d";
    case Method::kSeasonalNaiveWeek:
      return "seasonalNaive7d";
    case Method::kHoltWinters:
      return "holtWinters";
    case Method::kCombinedLow:
      return "combinedLow";
    case Method::kCombinedMean:
      return "combinedMean";
  }
  return "latestValue";
}

std::string_view methodTitle(Method method) {
  switch (method) {
    case Method::kSeasonal:
      return "rhythm model";
    case Method::kLatestValue:
      return "latest value";
    case Method::kSeasonalNaiveDay:
      return "seasonal naive (1d)";
    case Method::kSeasonalNaiveWeek:
      return "seasonal naive (7d)";
    case Method::kHoltWinters:
      return "Holt-Winters (1d season)";
    case Method::kCombinedLow:
      return "lower of seasonal naive (1d) and Holt-Winters";
    case Method::kCombinedMean:
      return "mean of seasonal naive (1d) and Holt-Winters";
  }
  return "latest value";
}

namespace {

Forecast modelLatestValue(double latest, int horizon, std::string why) {
  Forecast forecast;
  forecast.method = Method::kLatestValue;
  forecast.why = std::move(why);
  forecast.values.assign(static_cast<std::size_t>(horizon) + 1, latest);
  forecast.maximum = latest;
  return forecast;
}

// E[max over h of (means[h] + sds[h] * Z_h)] for independent standard normal Z_h: the expected
// maximum of noisy demand around a forecast, by Clark's moment matching (C. E. Clark, "The
// greatest of a finite set of random variables", 1961): exact for two values, close for more.
double expectedMaximum(std::span<const double> means, std::span<const double> sds) {
  double mean = means[0];
  double variance = sds[0] * sds[0];
  for (std::size_t h = 1; h < means.size(); ++h) {
    const double other_mean = means[h];
    const double other_variance = sds[h] * sds[h];
    const double spread = std::sqrt(variance + other_variance);
    if (!(spread > 0)) {
      mean = std::max(mean, other_mean);
      continue;
    }
    const double alpha = (mean - other_mean) / spread;
    const double cdf = 0.5 * std::erfc(-alpha / std::numbers::sqrt2);
    const double pdf = std::exp(-0.5 * alpha * alpha) / std::sqrt(2 * std::numbers::pi);
    const double first = mean * cdf + other_mean * (1 - cdf) + spread * pdf;
    const double second = (mean * mean + variance) * cdf +
                          (other_mean * other_mean + other_variance) * (1 - cdf) +
                          (mean + other_mean) * spread * pdf;
    mean = first;
    variance = std::max(0.0, second - first * first);
  }
  return mean;
}

// Profile and level of the seasonal model over `x` (the history from its first finite value).
class SeasonalModel {
 public:
  SeasonalModel(std::span<const float> x, std::size_t period, std::chrono::seconds step)
      : x_(x),
        period_(period),
        phase_window_(modelSteps(kPhaseWindow, step, 0)),
        level_window_(modelSteps(kLevelWindow, step, 1)),
        shift_window_(std::min(level_window_, modelSteps(kShiftWindow, step, 1))) {}

  std::size_t levelWindow() const { return level_window_; }

  // The profile at index j (may lie after the history's end): the median of the finite values
  // within the phase window of j - k * period, for every k >= 1 inside the history.
  double profile(std::size_t j) {
    scratch_.clear();
    const auto window = static_cast<std::ptrdiff_t>(phase_window_);
    const auto last = static_cast<std::ptrdiff_t>(x_.size()) - 1;
    const auto period = static_cast<std::ptrdiff_t>(period_);
    for (auto centre = static_cast<std::ptrdiff_t>(j) - period; centre + window >= 0;
         centre -= period) {
      const std::ptrdiff_t hi = std::min(last, centre + window);
      for (std::ptrdiff_t i = std::max<std::ptrdiff_t>(0, centre - window); i <= hi; ++i) {
        const float v = x_[static_cast<std::size_t>(i)];
        if (std::isfinite(v)) scratch_.push_back(v);
      }
    }
    return stats::medianInPlace(scratch_);
  }

  // The level at the end of residuals[0, end) (a residual is a value minus its profile): the
  // median over the level window, or over the shift window when that differs by more than
  // kShiftSigmas of its own noise. NaN when the level window has no finite residual.
  double level(const std::vector<double>& residuals, std::size_t end) {
    const std::size_t begin = end - std::min(end, level_window_);
    assign(residuals, begin, end);
    const double quiet = stats::medianInPlace(scratch_);
    if (!std::isfinite(quiet)) return quiet;
    for (double& r : scratch_) r = std::abs(r - quiet);
    const double spread = stats::medianInPlace(scratch_);  // the MAD
    assign(residuals, end - std::min(end, shift_window_), end);
    const auto count =
        std::count_if(scratch_.begin(), scratch_.end(), [](double r) { return std::isfinite(r); });
    if (count == 0) return quiet;
    const double recent = stats::medianInPlace(scratch_);
    // The standard error of the median of `count` normal values with this MAD.
    const double noise = 1.4826 * spread * 1.2533 / std::sqrt(static_cast<double>(count));
    return std::abs(recent - quiet) > kShiftSigmas * noise ? recent : quiet;
  }

 private:
  void assign(const std::vector<double>& values, std::size_t from, std::size_t to) {
    scratch_.assign(values.begin() + static_cast<std::ptrdiff_t>(from),
                    values.begin() + static_cast<std::ptrdiff_t>(to));
  }

  std::span<const float> x_;
  std::size_t period_;
  std::size_t phase_window_;
  std::size_t level_window_;
  std::size_t shift_window_;
  std::vector<double> scratch_;
};

}  // namespace

Forecast forecastAhead(std::span<const float> history, std::chrono::seconds step, int horizon_steps,
                       const ModelOptions& options) {
  const int horizon = std::max(0, horizon_steps);
  const auto last_finite =
      std::find_if(history.rbegin(), history.rend(), [](float v) { return std::isfinite(v); });
  if (last_finite == history.rend()) {
    return modelLatestValue(kNaN, horizon, "no value in the history: nothing to serve");
  }
  const double latest = *last_finite;
  if (step.count() <= 0) {
    return modelLatestValue(latest, horizon, "the step is not positive: serving the latest value");
  }
  const auto first_finite =
      std::find_if(history.begin(), history.end(), [](float v) { return std::isfinite(v); });
  const std::span<const float> x =
      history.subspan(static_cast<std::size_t>(first_finite - history.begin()));
  const double days = modelDays(x.size(), step);
  if (step * static_cast<std::int64_t>(x.size()) < kMinimumHistory) {
    return modelLatestValue(latest, horizon,
                            fmt::format("only {:.1f} days of history; a forecast needs {} days: "
                                        "serving the latest value",
                                        days, kMinimumHistory.count() / 24));
  }
  const rhythm::RhythmReport report = rhythm::detectRhythm(x, step);
  if (!report.chosen) {
    return modelLatestValue(
        latest, horizon,
        fmt::format("no daily or weekly rhythm found in {:.1f} days of history: serving the "
                    "latest value",
                    days));
  }
  const std::string rhythm_name = modelPeriodName(report.chosen->period);

  const std::size_t n = x.size();
  const auto h_steps = static_cast<std::size_t>(horizon);
  SeasonalModel model(x, modelSteps(report.chosen->period, step, 1), step);
  const std::size_t level_window = model.levelWindow();
  const std::size_t error_window = modelSteps(kErrorWindow, step, 1);

  // Profile and residuals from `first` (early enough for the levels of the error window) to the
  // end of the horizon; element i is history index first + i.
  const std::size_t reach = h_steps + error_window + level_window;
  const std::size_t first = n > reach ? n - reach : 0;
  std::vector<double> profile(n + h_steps - first);
  std::vector<double> residual(n - first);
  for (std::size_t j = first; j < n + h_steps; ++j) {
    profile[j - first] = model.profile(j);
    if (j < n) residual[j - first] = static_cast<double>(x[j]) - profile[j - first];
  }

  // The current level (the median of all those residuals when the last hour has none).
  double level = model.level(residual, residual.size());
  if (!std::isfinite(level)) {
    std::vector<double> all(residual);
    level = stats::medianInPlace(all);
  }
  if (!std::isfinite(level)) level = 0;

  // Demand that was never negative is not forecast negative, and its errors are relative: noise
  // grows with demand, so a margin learnt at night must not be the one served at the peak.
  const bool non_negative =
      std::none_of(x.begin(), x.end(), [](float v) { return std::isfinite(v) && v < 0; });

  // The noise of one value around the model: the spread (MAD, as a standard deviation) of the
  // level window's residuals around the level, relative to the forecast for non-negative demand.
  double noise = 0;
  {
    std::vector<double> deviations;
    for (std::size_t i = residual.size() - std::min(residual.size(), level_window);
         i < residual.size(); ++i) {
      const double expected = profile[i] + level;
      if (!non_negative) {
        deviations.push_back(residual[i] - level);
      } else if (expected > 0) {
        deviations.push_back((residual[i] - level) / expected);
      }
    }
    const double centre = stats::medianInPlace(deviations);
    for (double& d : deviations) d = std::abs(d - centre);
    const double mad = stats::medianInPlace(deviations);
    if (std::isfinite(mad)) noise = 1.4826 * mad;
  }
  std::vector<double> means(h_steps + 1);
  std::vector<double> sds(h_steps + 1);
  // The expected maximum of the demand over [t, t + horizon] seen from t: the profile plus
  // `level_at_t` at every step, each with its noise.
  // Only one step per sample of the series is an independent value: a 5-minute sample repeated
  // over 5 grid steps is one draw of the noise, not five.
  const std::size_t spacing = std::max<std::size_t>(1, options.sample_spacing_steps);
  const auto served = [&](std::size_t t, double level_at_t) {
    std::size_t count = 0;
    for (std::size_t h = 0; h <= h_steps; h += spacing, ++count) {
      means[count] = profile[t + h - first] + level_at_t;
      sds[count] = non_negative ? noise * std::max(0.0, means[count]) : noise;
    }
    return expectedMaximum(std::span(means).first(count), std::span(sds).first(count));
  };

  // The errors the served value would have had at recent times t, each with the level known at
  // t: the actual maximum over [t, t + horizon] against the served one.
  std::vector<double> errors;
  for (std::size_t t = n - 1 - h_steps; t >= first + level_window && t + h_steps < n;
       t -= std::min(t, kErrorStride)) {
    double actual_max = -kInfinity;
    bool profile_known = true;
    for (std::size_t i = t; i <= t + h_steps; ++i) {
      if (std::isfinite(x[i])) actual_max = std::max(actual_max, static_cast<double>(x[i]));
      profile_known = profile_known && std::isfinite(profile[i - first]);
    }
    if (!profile_known || !std::isfinite(actual_max)) continue;
    const double expected_max = served(t, model.level(residual, t + 1 - first));
    if (!std::isfinite(expected_max)) continue;
    if (!non_negative) {
      errors.push_back(actual_max - expected_max);
    } else if (expected_max > 0) {
      errors.push_back(actual_max / expected_max - 1);
    }
  }
  const double quantile = std::clamp(options.quantile, kMinQuantile, kMaxQuantile);
  const double margin = errors.empty() ? 0 : stats::quantileInPlace(errors, quantile);

  // Phases no earlier cycle observed take the profile of the nearest earlier horizon step (of the
  // first one with a value, for the leading ones).
  std::vector<double> future(profile.end() - static_cast<std::ptrdiff_t>(h_steps + 1),
                             profile.end());
  const auto known =
      std::find_if(future.begin(), future.end(), [](double v) { return std::isfinite(v); });
  if (known == future.end()) {
    return modelLatestValue(latest, horizon,
                            fmt::format("{} found in {:.1f} days of history, but no earlier "
                                        "cycle has values at this time: serving the latest value",
                                        rhythm_name, days));
  }
  double carry = *known;
  for (double& v : future) {
    if (std::isfinite(v)) {
      carry = v;
    } else {
      v = carry;
    }
  }

  // The values: the profile plus the level, raised together so that their maximum is the
  // expected maximum of the demand, then by the margin.
  for (std::size_t h = 0; h <= h_steps; ++h) profile[n - 1 - first + h] = future[h];
  const double expected_max = served(n - 1, level);
  double forecast_max = -kInfinity;
  for (double& v : future) {
    v += level;
    forecast_max = std::max(forecast_max, v);
  }
  Forecast forecast;
  forecast.method = Method::kSeasonal;
  forecast.period = report.chosen->period;
  forecast.why = fmt::format("{} found in {:.1f} days of history (autocorrelation {:.2f})",
                             rhythm_name, days, report.chosen->autocorrelation);
  forecast.values.reserve(h_steps + 1);
  for (const double v : future) {
    if (!non_negative) {
      forecast.values.push_back(v + (expected_max - forecast_max) + margin);
    } else if (forecast_max > 0) {
      forecast.values.push_back(std::max(0.0, v * expected_max / forecast_max * (1 + margin)));
    } else {
      forecast.values.push_back(0);
    }
  }
  forecast.maximum = *std::max_element(forecast.values.begin(), forecast.values.end());
  return forecast;
}

}  // namespace metrics_adapter::forecast
