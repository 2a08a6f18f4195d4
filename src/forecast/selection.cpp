#include "metrics_adapter/forecast/selection.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "forecast/rhythm.h"

namespace metrics_adapter::forecast {
namespace {

constexpr double kSelectionNaN = std::numeric_limits<double>::quiet_NaN();

std::int64_t selectionSteps(std::chrono::seconds duration, std::chrono::seconds step) {
  return std::max<std::int64_t>(1, duration / step);
}

double selectionDays(std::size_t steps, std::chrono::seconds step) {
  return static_cast<double>(steps) * static_cast<double>(step.count()) / 86400.0;
}

// A combined method's value from the two it combines: the lower or the mean.
double combined(Method method, double day, double holt_winters) {
  return method == Method::kCombinedLow ? std::min(day, holt_winters) : (day + holt_winters) / 2;
}

// A combined method's values: at each step of the horizon the combination of the highest value
// seasonal naive (1d) and Holt-Winters expect by then, each at least the latest value (below it
// neither says anything the latest value does not). So their maximum, the served value, is the
// combination of the two methods' served values, which is how the selection scores it.
std::vector<double> combinedValues(Method method, std::span<const double> day,
                                   std::span<const double> holt_winters, double latest) {
  std::vector<double> values(day.size());
  double a = latest;
  double b = latest;
  for (std::size_t h = 0; h < day.size(); ++h) {
    if (std::isfinite(day[h]) && day[h] > a) a = day[h];
    if (std::isfinite(holt_winters[h]) && holt_winters[h] > b) b = holt_winters[h];
    values[h] = combined(method, a, b);
  }
  return values;
}

// The values `method` forecasts at the history's end (horizon_steps + 1 of them), before the
// floor at the latest value. `model` receives the rhythm model's whole forecast.
std::vector<double> candidateValues(Method method, std::span<const float> history,
                                    std::chrono::seconds step, int horizon_steps,
                                    const ModelOptions& options,
                                    const HoltWintersParameters& holt_winters,
                                    Forecast* model = nullptr) {
  switch (method) {
    case Method::kSeasonal: {
      Forecast forecast = forecastAhead(history, step, horizon_steps, options);
      std::vector<double> values = forecast.values;
      if (model) *model = std::move(forecast);
      return values;
    }
    case Method::kSeasonalNaiveDay:
      return seasonalNaive(history, step, rhythm::kDay, horizon_steps);
    case Method::kSeasonalNaiveWeek:
      return seasonalNaive(history, step, rhythm::kWeek, horizon_steps);
    case Method::kHoltWinters:
      return holtWintersWith(history, step, rhythm::kDay, horizon_steps, holt_winters);
    case Method::kCombinedLow:
    case Method::kCombinedMean:
      return combinedValues(
          method, seasonalNaive(history, step, rhythm::kDay, horizon_steps),
          holtWintersWith(history, step, rhythm::kDay, horizon_steps, holt_winters),
          latestFinite(history));
    case Method::kLatestValue:
      break;
  }
  return std::vector<double>(static_cast<std::size_t>(std::max(0, horizon_steps)) + 1,
                             latestFinite(history));
}

// The served value: the maximum of the finite values, at least `latest`.
double servedValue(std::span<const double> values, double latest) {
  double served = latest;
  for (const double v : values) {
    if (std::isfinite(v) && v > served) served = v;
  }
  return served;
}

// The maximum of the finite values, or `latest` when there is none: not raised to the latest
// value, for a window that starts after the latest value's time (the demand may have fallen
// since, and the window does not hold that step).
double unflooredValue(std::span<const double> values, double latest) {
  const double served = servedValue(values, -std::numeric_limits<double>::infinity());
  return std::isfinite(served) ? served : latest;
}

// windows[k] = the maximum over values[k .. k + horizon], k = 0 .. lead (values holds
// lead + horizon + 1 of them), raised to `latest` for the first `floored` windows.
std::vector<double> windowMaxima(std::span<const double> values, int horizon, int lead,
                                 double latest, std::size_t floored) {
  std::vector<double> windows;
  for (int k = 0; k <= lead; ++k) {
    const auto from = static_cast<std::size_t>(k);
    if (from >= values.size()) break;
    const std::size_t count = std::min(values.size() - from, static_cast<std::size_t>(horizon) + 1);
    const std::span<const double> window = values.subspan(from, count);
    windows.push_back(from < floored ? servedValue(window, latest)
                                     : unflooredValue(window, latest));
  }
  return windows;
}

// The window maxima of the two methods a combination combines, seasonal naive (1d) and
// Holt-Winters, for each window start, before the floor at the latest value (a read raises each
// to the value it knows, then combines them: servedAt).
std::vector<std::pair<double, double>> combinedParts(std::span<const float> history,
                                                     std::chrono::seconds step, int horizon,
                                                     int lead,
                                                     const HoltWintersParameters& parameters) {
  const double latest = latestFinite(history);
  const std::vector<double> day = seasonalNaive(history, step, rhythm::kDay, horizon + lead);
  const std::vector<double> holt_winters =
      holtWintersWith(history, step, rhythm::kDay, horizon + lead, parameters);
  const std::vector<double> day_windows = windowMaxima(day, horizon, lead, latest, 0);
  const std::vector<double> holt_winters_windows =
      windowMaxima(holt_winters, horizon, lead, latest, 0);
  std::vector<std::pair<double, double>> parts(
      std::min(day_windows.size(), holt_winters_windows.size()));
  for (std::size_t k = 0; k < parts.size(); ++k) {
    parts[k] = {day_windows[k], holt_winters_windows[k]};
  }
  return parts;
}

// A combination's served value for a window, its parts raised to `latest` (as the selection
// scores it): the combination of what each method serves over that window, not the maximum of a
// combined curve, which would carry a rise from before the window into it.
double combinedAt(Method method, const std::pair<double, double>& parts, double latest) {
  return combined(method, std::max(parts.first, latest), std::max(parts.second, latest));
}

// One candidate's errors at some of the scored steps.
struct CandidateErrors {
  Method method = Method::kLatestValue;
  std::vector<std::size_t> recorded;    // indices into SelectionScores::points
  std::vector<double> relative_errors;  // NaN where the actual maximum was not positive
  std::vector<char> under;
  std::size_t last_point = 0;

  void record(std::size_t k, double served, double actual_max) {
    recorded.push_back(k);
    relative_errors.push_back(actual_max > 0 ? std::abs(served - actual_max) / actual_max
                                             : kSelectionNaN);
    under.push_back(served < actual_max ? 1 : 0);
  }
};

struct Choice {
  Method method = Method::kLatestValue;
  const CandidateErrors* score = nullptr;  // null: nothing could be scored
};

// Every candidate's errors, and the choice among them over a window ending at a given step.
struct SelectionScores {
  std::vector<std::size_t> points;  // scored history indices, ascending
  std::vector<double> actual_max;   // the target at each
  std::vector<CandidateErrors> candidates;

  CandidateErrors& add(Method method) {
    candidates.push_back(CandidateErrors{});
    candidates.back().method = method;
    return candidates.back();
  }

  const CandidateErrors* find(Method method) const {
    for (const CandidateErrors& c : candidates) {
      if (c.method == method) return &c;
    }
    return nullptr;
  }

  // The figures of `errors` over the steps in (end - window, end] that are also in `only` (all
  // of them when only is null).
  MethodScore score(const CandidateErrors& errors, std::size_t end, std::size_t window,
                    const CandidateErrors* only = nullptr) const {
    MethodScore result;
    result.method = errors.method;
    double sum = 0;
    std::size_t counted = 0;
    std::size_t under = 0;
    std::size_t j = 0;
    for (std::size_t i = 0; i < errors.recorded.size(); ++i) {
      const std::size_t t = points[errors.recorded[i]];
      if (t > end || t + window <= end) continue;
      if (only != nullptr) {
        while (j < only->recorded.size() && only->recorded[j] < errors.recorded[i]) ++j;
        if (j == only->recorded.size() || only->recorded[j] != errors.recorded[i]) continue;
      }
      ++result.points;
      under += errors.under[i] != 0 ? 1 : 0;
      if (std::isfinite(errors.relative_errors[i])) {
        sum += errors.relative_errors[i];
        ++counted;
      }
    }
    result.mape = counted > 0 ? sum / static_cast<double>(counted) : kSelectionNaN;
    result.under_forecast_ratio =
        result.points > 0 ? static_cast<double>(under) / static_cast<double>(result.points) : 0;
    return result;
  }

  // The choice over the window ending at `end`: from the latest value, each rank of caution in
  // turn (the combined methods, then one simple method) replaces what was chosen so far when its
  // best beats it by kSelectionMargin (ties to the earlier added); then the rhythm model when it
  // beats that by kModelMargin on the model's own steps.
  Choice choose(std::size_t end, std::size_t window) const {
    Choice best;
    const CandidateErrors* latest = find(Method::kLatestValue);
    if (latest == nullptr) return best;
    double best_mape = score(*latest, end, window).mape;
    if (!std::isfinite(best_mape)) return best;
    best = Choice{Method::kLatestValue, latest};
    for (const int rank : {1, 2}) {
      double to_beat = best_mape * (1 - kSelectionMargin);
      for (const CandidateErrors& c : candidates) {
        if (cautionRank(c.method) != rank) continue;
        const double mape = score(c, end, window).mape;
        if (std::isfinite(mape) && mape <= to_beat) {
          best = Choice{c.method, &c};
          best_mape = to_beat = mape;
        }
      }
    }
    const CandidateErrors* model = find(Method::kSeasonal);
    if (model == nullptr || model->recorded.empty()) return best;
    const double model_mape = score(*model, end, window).mape;
    const double simple_mape = score(*best.score, end, window, model).mape;
    if (std::isfinite(model_mape) && model_mape <= simple_mape * (1 - kModelMargin)) {
      return Choice{Method::kSeasonal, model};
    }
    return best;
  }

  // Whether `incumbent` stays rather than `challenger`: its error within kSelectionHysteresis of
  // the challenger's (both on the steps they can be compared on), and, when it is not the latest
  // value, still below the latest value's by half the margin.
  bool keeps(Method incumbent, Method challenger, std::size_t end, std::size_t window) const {
    const CandidateErrors* a = find(incumbent);
    const CandidateErrors* b = find(challenger);
    const CandidateErrors* latest = find(Method::kLatestValue);
    if (a == nullptr || b == nullptr || latest == nullptr) return false;
    const bool model = incumbent == Method::kSeasonal || challenger == Method::kSeasonal;
    const CandidateErrors* on = model ? find(Method::kSeasonal) : nullptr;
    const double kept = score(*a, end, window, on).mape;
    const double best = score(*b, end, window, on).mape;
    if (!std::isfinite(kept) || !std::isfinite(best) ||
        kept > best * (1 + kSelectionHysteresis) + 1e-12) {
      return false;
    }
    if (incumbent == Method::kLatestValue) return true;
    const double latest_mape = score(*latest, end, window, on).mape;
    return kept <= latest_mape * (1 - kSelectionMargin / 2);
  }

  // Every candidate's figures over the window (the model's on its own steps), best first.
  std::vector<MethodScore> report(std::size_t end, std::size_t window) const {
    std::vector<MethodScore> result;
    for (const CandidateErrors& c : candidates) {
      result.push_back(score(c, end, window));
    }
    std::stable_sort(result.begin(), result.end(), [](const MethodScore& a, const MethodScore& b) {
      if (std::isfinite(a.mape) != std::isfinite(b.mape)) return std::isfinite(a.mape);
      return a.mape < b.mape;
    });
    return result;
  }
};

Selection latestOnly(Sampling sampling, std::string why) {
  Selection selection;
  selection.method = Method::kLatestValue;
  selection.sampling = sampling;
  selection.why = std::move(why);
  return selection;
}

// selectMethod for a series scored on the grid it is read at; `x` starts at its first value.
Selection selectOnGrid(std::span<const float> x, const Sampling& sampling,
                       std::chrono::seconds step, int horizon_steps, const ModelOptions& options,
                       int lag_steps) {
  const double days = selectionDays(x.size(), step);
  if (step * static_cast<std::int64_t>(x.size()) < kMinimumHistory) {
    return latestOnly(sampling, fmt::format("only {:.1f} days of history; a forecast needs {} "
                                            "days: serving the latest value",
                                            days, kMinimumHistory.count() / 24));
  }
  const auto horizon = static_cast<std::size_t>(std::max(0, horizon_steps));
  if (x.size() <= 2 * horizon) {  // config limits the horizon to 24h, half the minimum history
    return latestOnly(sampling, "the horizon is as long as the history: serving the latest value");
  }

  ModelOptions model_options = options;
  model_options.sample_spacing_steps = sampling.spacing_steps;
  Selection selection;
  selection.sampling = sampling;
  selection.holt_winters = fitHoltWinters(x, step, rhythm::kDay);
  const bool weekly = step * static_cast<std::int64_t>(x.size()) >= kWeeklyCandidateHistory;

  // The scored steps: every step with a value over the windows (and the hysteresis period before
  // them), each with its whole horizon inside the history.
  const auto period = static_cast<std::size_t>(selectionSteps(kSelectionPeriod, step));
  const auto window = static_cast<std::size_t>(selectionSteps(kSelectionWindow, step));
  const auto stride = static_cast<std::size_t>(selectionSteps(kSelectionStride, step));
  const std::size_t last_scored = x.size() - 1 - horizon;
  const std::size_t reach = window + period;
  // Each scored step t is served as serving serves it: from the history up to t - lag, over
  // [t, t + horizon].
  const auto lag = static_cast<std::size_t>(std::max(0, lag_steps));
  const int ahead = horizon_steps + static_cast<int>(lag);
  const std::size_t lowest =
      std::max(lag, last_scored + 1 > reach ? last_scored + 1 - reach : std::size_t{0});
  SelectionScores scores;
  for (std::size_t t = lowest; t <= last_scored; ++t) {
    if (!std::isfinite(x[t])) continue;
    double actual_max = kSelectionNaN;
    for (std::size_t i = t; i <= t + horizon; ++i) {
      if (std::isfinite(x[i]) && !(x[i] <= actual_max)) actual_max = x[i];
    }
    scores.points.push_back(t);
    scores.actual_max.push_back(actual_max);
  }
  // The simple methods at every scored step (cheap); the rhythm model at one step per stride
  // (each costs as much as a served forecast), the latest step with a value in each.
  std::vector<Method> simple{Method::kLatestValue, Method::kSeasonalNaiveDay};
  if (weekly) simple.push_back(Method::kSeasonalNaiveWeek);
  simple.insert(simple.end(), {Method::kHoltWinters, Method::kCombinedLow, Method::kCombinedMean});
  for (const Method method : simple) scores.add(method);
  const std::size_t width = horizon + lag + 1;
  const std::vector<double> holt_winters_curves =
      holtWintersCurves(x, step, rhythm::kDay, ahead, selection.holt_winters, lowest - lag);
  // The served value of a forecast made `lag` steps before its window: its values from there,
  // raised to the value at t, which the read knows from its fresh instant query (servedAt).
  const auto served_of = [lag, horizon](std::span<const double> values, double latest) {
    const std::span<const double> window =
        values.subspan(std::min(lag, values.size()),
                       std::min(values.size() - std::min(lag, values.size()), horizon + 1));
    return servedValue(window, latest);
  };
  for (std::size_t k = 0; k < scores.points.size(); ++k) {
    const std::size_t t = scores.points[k];
    const std::size_t origin = t - lag;
    const std::span<const float> known = x.first(origin + 1);
    // The latest value a read at t serves is the value at t, not at the history's end: a normal
    // rule's answer at the same moment.
    const double latest = x[t];
    const double day = served_of(seasonalNaive(known, step, rhythm::kDay, ahead), latest);
    const double holt_winters = served_of(
        std::span(holt_winters_curves).subspan((origin - (lowest - lag)) * width, width), latest);
    for (CandidateErrors& errors : scores.candidates) {
      double served = latest;
      switch (errors.method) {
        case Method::kSeasonalNaiveDay:
          served = day;
          break;
        case Method::kSeasonalNaiveWeek:
          served = served_of(seasonalNaive(known, step, rhythm::kWeek, ahead), latest);
          break;
        case Method::kHoltWinters:
          served = holt_winters;
          break;
        case Method::kCombinedLow:
        case Method::kCombinedMean:
          served = combined(errors.method, std::max(day, latest), std::max(holt_winters, latest));
          break;
        case Method::kLatestValue:
        case Method::kSeasonal:
          break;
      }
      errors.record(k, served, scores.actual_max[k]);
    }
  }
  CandidateErrors& model = scores.add(Method::kSeasonal);
  for (std::size_t k = scores.points.size(); k-- > 0;) {
    const std::size_t t = scores.points[k];
    if (t + window + period <= last_scored + 1) break;
    if (!model.recorded.empty() && model.last_point - t < stride) continue;
    const std::span<const float> known = x.first(t - lag + 1);
    const double served = served_of(candidateValues(Method::kSeasonal, known, step, ahead,
                                                    model_options, selection.holt_winters),
                                    x[t]);
    model.record(k, served, scores.actual_max[k]);
    model.last_point = t;
  }
  // Recorded from the end back: put in order, as score() expects.
  std::reverse(model.recorded.begin(), model.recorded.end());
  std::reverse(model.relative_errors.begin(), model.relative_errors.end());
  std::reverse(model.under.begin(), model.under.end());

  const Choice now = scores.choose(last_scored, window);
  if (now.score == nullptr) {
    return latestOnly(
        sampling, fmt::format("no step of the last {:.0f} days could be scored ({}): "
                              "serving the latest value",
                              selectionDays(window, step), samplingText(sampling, step.count())));
  }
  Choice chosen = now;
  bool kept = false;
  if (last_scored >= period) {
    const Choice earlier = scores.choose(last_scored - period, window);
    if (earlier.score != nullptr && earlier.method != now.method &&
        scores.keeps(earlier.method, now.method, last_scored, window)) {
      chosen = earlier;
      kept = true;
    }
  }
  selection.method = chosen.method;
  selection.scores = scores.report(last_scored, window);
  const MethodScore* runner_up = nullptr;
  const MethodScore* served_score = nullptr;
  for (const MethodScore& score : selection.scores) {
    if (score.method == chosen.method) {
      served_score = &score;
    } else if (runner_up == nullptr && std::isfinite(score.mape)) {
      runner_up = &score;
    }
  }
  selection.why = fmt::format(
      "{}: MAPE {:.1f} % on this series' last {:.0f} days of {:.1f} ({} steps; {} methods "
      "replayed, each further from the latest value serving only when {:.0f} % better than the "
      "more cautious",
      methodTitle(chosen.method), served_score ? served_score->mape * 100 : kSelectionNaN,
      selectionDays(window, step), days, served_score ? served_score->points : 0, simple.size() + 1,
      kSelectionMargin * 100);
  if (runner_up != nullptr) {
    selection.why +=
        fmt::format("; next {} {:.1f} %", methodTitle(runner_up->method), runner_up->mape * 100);
  }
  selection.why += ")";
  if (kept) {
    selection.why += fmt::format(", kept from the hour before: within {:.0f} % of the new choice",
                                 kSelectionHysteresis * 100);
  }
  return selection;
}

// The horizon of a selection on a series' own samples: the next sample. No lag: until the next
// sample is due, the history a forecast is made from holds the latest one.
constexpr int kNextSample = 1;

// A series sampled more coarsely than the horizon, selected on its own samples: each method
// scored at every sample on the maximum of that sample and the next, the target of a window that
// holds the next one's due time.
Selection selectOnSamples(std::span<const float> x, const Sampling& sampling,
                          std::chrono::seconds step, const ModelOptions& options) {
  const std::vector<float> samples = nativeSamples(x, sampling.spacing_steps).values;
  Selection selection =
      selectOnGrid(samples, analyseSampling(samples),
                   step * static_cast<std::int64_t>(sampling.spacing_steps), kNextSample, options,
                   /*lag_steps=*/0);
  selection.why = fmt::format("{}, so chosen on its own samples (a step below is a sample): {}",
                              samplingText(sampling, step.count()), selection.why);
  selection.sampling = sampling;
  selection.on_samples = true;
  return selection;
}

// What every forecast copies from the selection that chose its method.
Forecast selectedForecast(const Selection& selection) {
  Forecast forecast;
  forecast.method = selection.method;
  forecast.scores = selection.scores;
  forecast.why = selection.why;
  forecast.sampling = selection.sampling;
  forecast.on_samples = selection.on_samples;
  return forecast;
}

// forecastWith for a series read on its grid (not on its own samples).
Forecast forecastOnGrid(const Selection& selection, std::span<const float> history,
                        std::chrono::seconds step, int horizon_steps, const ModelOptions& options,
                        int lead_steps) {
  Forecast forecast = selectedForecast(selection);
  const double latest = latestFinite(history);
  ModelOptions model_options = options;
  model_options.sample_spacing_steps = selection.sampling.spacing_steps;
  Forecast model;
  const int lead = std::max(0, lead_steps);
  const int horizon = std::max(0, horizon_steps);
  forecast.values = candidateValues(selection.method, history, step, horizon + lead, model_options,
                                    selection.holt_winters, &model);
  if (selection.method == Method::kCombinedLow || selection.method == Method::kCombinedMean) {
    // Each part raised to the latest value in every window: that is how the combination is
    // defined.
    forecast.combined_parts = combinedParts(history, step, horizon, lead, selection.holt_winters);
    for (const auto& parts : forecast.combined_parts) {
      forecast.windows.push_back(combinedAt(selection.method, parts, latest));
    }
  } else {
    forecast.windows = windowMaxima(forecast.values, horizon, lead, latest, 1);
    forecast.unfloored_windows = windowMaxima(forecast.values, horizon, lead, latest, 0);
  }
  if (selection.method == Method::kSeasonal) {
    forecast.why += "; " + model.why;
    forecast.period = model.period;
  } else if (selection.method == Method::kSeasonalNaiveDay ||
             selection.method == Method::kHoltWinters) {
    forecast.period = rhythm::kDay;
  } else if (selection.method == Method::kSeasonalNaiveWeek) {
    forecast.period = rhythm::kWeek;
  }
  // Now is known: the forecast at now is the actual value, and nothing below it is served.
  if (!forecast.values.empty() && std::isfinite(latest)) {
    if (!(forecast.values[0] >= latest)) forecast.values[0] = latest;
  }
  forecast.maximum =
      forecast.windows.empty() ? servedValue(forecast.values, latest) : forecast.windows.front();
  return forecast;
}

// The first of the due times next_due, next_due + spacing, ... at or after grid step `from`
// (steps after the history's end), and which sample it is (1: the next one).
struct DueSample {
  std::int64_t at = 0;
  std::int64_t number = 1;
};

DueSample firstDueFrom(std::int64_t next_due, std::int64_t spacing, std::int64_t from) {
  if (from <= next_due) return {next_due, 1};
  const std::int64_t passed = (from - next_due + spacing - 1) / spacing;
  return {next_due + passed * spacing, passed + 1};
}

// forecastWith for a series forecast on its own samples: the selected method forecasts the
// samples due up to the last window's end from the samples so far, and each window serves what
// the selection scored (the served value over the latest sample and the next) when it holds a
// sample's due time, and otherwise the value current at its start: the latest value until the
// next sample is due.
Forecast forecastOnSamples(const Selection& selection, std::span<const float> history,
                           std::chrono::seconds step, int horizon_steps,
                           const ModelOptions& options, int lead_steps) {
  Forecast forecast = selectedForecast(selection);
  const double latest = latestFinite(history);
  const int horizon = std::max(0, horizon_steps);
  const int lead = std::max(0, lead_steps);
  forecast.values.assign(static_cast<std::size_t>(horizon + lead) + 1, latest);
  forecast.windows.assign(static_cast<std::size_t>(lead) + 1, latest);
  forecast.maximum = latest;
  forecast.horizon_steps = horizon;
  const auto spacing =
      static_cast<std::int64_t>(std::max<std::size_t>(1, forecast.sampling.spacing_steps));
  const NativeSamples native = nativeSamples(history, forecast.sampling.spacing_steps);
  if (native.values.empty()) return forecast;
  const std::int64_t next_due = spacing - static_cast<std::int64_t>(native.latest_age_steps);
  forecast.next_sample_due = next_due;
  const std::int64_t reach = horizon + lead;
  // How many samples are due up to the last window's end.
  const std::int64_t due_samples = firstDueFrom(next_due, spacing, reach + 1).number - 1;
  if (due_samples == 0) return forecast;

  Selection on_samples = selection;
  on_samples.sampling = analyseSampling(native.values);
  const Forecast next = forecastOnGrid(on_samples, native.values, step * spacing, kNextSample,
                                       options, static_cast<int>(due_samples - 1));
  forecast.why = next.why;
  forecast.period = next.period;
  for (std::int64_t h = 0; h <= reach; ++h) {
    // The sample current at h: 0 the latest, n the n-th due since (next.values[n]).
    const std::int64_t current = firstDueFrom(next_due, spacing, h + 1).number - 1;
    if (current > 0) {
      forecast.values[static_cast<std::size_t>(h)] = next.values[static_cast<std::size_t>(current)];
    }
  }
  for (std::int64_t k = 0; k <= lead; ++k) {
    const DueSample due = firstDueFrom(next_due, spacing, k);
    forecast.windows[static_cast<std::size_t>(k)] =
        due.at <= k + horizon ? next.windows[static_cast<std::size_t>(due.number - 1)]
                              : forecast.values[static_cast<std::size_t>(k)];
  }
  if (!(forecast.values[0] >= latest)) forecast.values[0] = latest;
  forecast.maximum = forecast.windows.front();
  return forecast;
}

}  // namespace

int cautionRank(Method method) {
  switch (method) {
    case Method::kLatestValue:
      return 0;
    case Method::kCombinedLow:
    case Method::kCombinedMean:
      return 1;
    case Method::kSeasonalNaiveDay:
    case Method::kSeasonalNaiveWeek:
    case Method::kHoltWinters:
      return 2;
    case Method::kSeasonal:
      return 3;
  }
  return 0;
}

Selection selectMethod(std::span<const float> history, std::chrono::seconds step, int horizon_steps,
                       const ModelOptions& options, int lag_steps) {
  const auto first_finite =
      std::find_if(history.begin(), history.end(), [](float v) { return std::isfinite(v); });
  const std::span<const float> x =
      history.subspan(static_cast<std::size_t>(first_finite - history.begin()));
  const Sampling sampling = analyseSampling(x);
  if (x.empty()) return latestOnly(sampling, "no value in the history: nothing to serve");
  if (step.count() <= 0) {
    return latestOnly(sampling, "the step is not positive: serving the latest value");
  }
  // More than a horizon between samples: a window holds at most one new sample, and only some
  // windows one; on the grid most steps would score the latest value against itself.
  if (sampling.spacing_steps > static_cast<std::size_t>(std::max(1, horizon_steps))) {
    return selectOnSamples(x, sampling, step, options);
  }
  return selectOnGrid(x, sampling, step, horizon_steps, options, lag_steps);
}

Forecast forecastWith(const Selection& selection, std::span<const float> history,
                      std::chrono::seconds step, int horizon_steps, const ModelOptions& options,
                      int lead_steps) {
  Forecast forecast =
      selection.on_samples
          ? forecastOnSamples(selection, history, step, horizon_steps, options, lead_steps)
          : forecastOnGrid(selection, history, step, horizon_steps, options, lead_steps);
  float largest = 0;
  for (const float value : history) {
    if (std::isfinite(value) && value > largest) largest = value;
  }
  forecast.negligible = kNegligibleShare * largest;
  return forecast;
}

std::string nextSampleText(const Forecast& forecast, std::chrono::seconds step, int horizon_steps,
                           std::size_t window_index) {
  if (!forecast.on_samples || !forecast.next_sample_due) return "";
  const auto spacing =
      static_cast<std::int64_t>(std::max<std::size_t>(1, forecast.sampling.spacing_steps));
  const std::int64_t next_due = *forecast.next_sample_due;
  const auto time = [&step](std::int64_t steps) { return durationText(steps * step.count()); };
  const auto from = static_cast<std::int64_t>(window_index);
  const DueSample due = firstDueFrom(next_due, spacing, from);
  const std::int64_t in = due.at - from;
  const std::string when = in == 0 ? "due now" : "due in " + time(in);
  const std::string window = time(std::max(0, horizon_steps));
  if (in > horizon_steps) {
    return fmt::format("next sample {}, after the {} window: {}", when, window,
                       due.number == 1 ? "serving the latest value"
                                       : "serving the forecast of the sample due before it");
  }
  const std::string by = forecast.method == Method::kLatestValue
                             ? "serving the latest value, its samples' best forecast"
                             : fmt::format("forecast by {}", methodTitle(forecast.method));
  return fmt::format("next sample {}, inside the {} window: {}", when, window, by);
}

std::string servedValueRule(const Forecast& forecast) {
  return forecast.on_samples
             ? "a sample due in the window: its forecast; else the value in force at the "
               "window's start"
             : "max over the horizon, never below the latest";
}

namespace {

// servedAt before the snap of a negligible value to 0.
double servedUnsnapped(const Forecast& forecast, std::size_t window_index, double latest) {
  const auto at = [window_index](const auto& windows) {
    return windows[std::min(window_index, windows.size() - 1)];
  };
  // The window as the refresh made it (raised to the history's last value for the first one).
  const double refreshed = forecast.windows.empty() ? forecast.maximum : at(forecast.windows);
  if (!std::isfinite(latest)) return refreshed;
  if (forecast.method == Method::kLatestValue) return latest;
  // A series forecast on its own samples: a sample due by the window's start has come (or was
  // missed), and `latest` is the value in force; the window serves its forecast only when it
  // holds a sample still to come (due after its start), raised to `latest`.
  if (forecast.on_samples) {
    if (!forecast.next_sample_due) return latest;
    const auto spacing =
        static_cast<std::int64_t>(std::max<std::size_t>(1, forecast.sampling.spacing_steps));
    const auto k = static_cast<std::int64_t>(window_index);
    const DueSample due = firstDueFrom(*forecast.next_sample_due, spacing, k + 1);
    return due.at > k + forecast.horizon_steps ? latest : std::max(refreshed, latest);
  }
  if (!forecast.combined_parts.empty()) {
    return combinedAt(forecast.method, at(forecast.combined_parts), latest);
  }
  return std::max(forecast.unfloored_windows.empty() ? refreshed : at(forecast.unfloored_windows),
                  latest);
}

}  // namespace

double servedAt(const Forecast& forecast, std::size_t window_index, double latest) {
  const double served = servedUnsnapped(forecast, window_index, latest);
  return served > 0 && served < forecast.negligible ? 0 : served;
}

std::string servedSamplingText(const Forecast& forecast, std::chrono::seconds step,
                               int horizon_steps, std::size_t window_index) {
  std::string text = samplingText(forecast.sampling, step.count());
  const std::string next = nextSampleText(forecast, step, horizon_steps, window_index);
  if (!next.empty()) text += "; " + next;
  return text;
}

Forecast pendingForecast(std::span<const float> history, int horizon_steps, int lead_steps) {
  Forecast forecast;
  const double latest = latestFinite(history);
  const int lead = std::max(0, lead_steps);
  forecast.values.assign(static_cast<std::size_t>(std::max(0, horizon_steps) + lead) + 1, latest);
  forecast.windows.assign(static_cast<std::size_t>(lead) + 1, latest);
  forecast.maximum = latest;
  forecast.why =
      "selection pending: this series' first method selection has not run yet (after a start "
      "the background worker makes them one after another): serving the latest value";
  return forecast;
}

SelectingForecaster::SelectingForecaster(std::chrono::seconds step, int horizon_steps,
                                         ModelOptions options,
                                         const std::map<std::string, std::string>& labels,
                                         int lag_steps)
    : step_(step),
      horizon_steps_(horizon_steps),
      lag_steps_(lag_steps),
      options_(options),
      period_steps_(selectionSteps(kSelectionPeriod, step)) {
  // FNV-1a of the labels: the same minute on every replica and every build.
  std::uint64_t hash = 14695981039346656037ULL;
  const auto mix = [&hash](std::string_view text) {
    for (const char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 1099511628211ULL;
    }
    hash ^= 0xff;
    hash *= 1099511628211ULL;
  };
  for (const auto& [name, value] : labels) {
    mix(name);
    mix(value);
  }
  offset_steps_ = static_cast<std::int64_t>(hash % static_cast<std::uint64_t>(period_steps_));
}

Forecast SelectingForecaster::forecast(std::span<const float> history, std::int64_t last_step,
                                       int lead_steps, FirstSelection first) {
  // The latest selection time at or before last_step: offset_steps_ past a period boundary.
  const std::int64_t since = last_step - offset_steps_;
  const std::int64_t phase = ((since % period_steps_) + period_steps_) % period_steps_;
  const std::int64_t at = last_step - phase;
  if (!selection_ && first == FirstSelection::kAtItsMinute) {
    if (!pending_at_) pending_at_ = at;
    // The series' own minute has not come since it started waiting.
    if (*pending_at_ == at) return pendingForecast(history, horizon_steps_, lead_steps);
  }
  if (!selection_ || selected_at_ != at) {
    // The history up to `at`, less one period at its start: exactly what every history of the
    // same length ending within the period holds, whenever it was fetched.
    const auto behind = static_cast<std::size_t>(phase);
    const std::size_t end = history.size() > behind ? history.size() - behind : 0;
    const std::size_t dropped =
        std::min(end, static_cast<std::size_t>(period_steps_) - static_cast<std::size_t>(phase));
    selection_ = selectMethod(history.subspan(dropped, end - dropped), step_, horizon_steps_,
                              options_, lag_steps_);
    selected_at_ = at;
  }
  return forecastWith(*selection_, history, step_, horizon_steps_, options_, lead_steps);
}

}  // namespace metrics_adapter::forecast
