#include "metrics_adapter/forecast/replay.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "forecast/rhythm.h"
#include "metrics_adapter/forecast/backtest.h"
#include "metrics_adapter/forecast/baselines.h"
#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/forecast/sampling.h"
#include "metrics_adapter/forecast/selection.h"

namespace metrics_adapter::forecast {
namespace {

constexpr double kReplayNaN = std::numeric_limits<double>::quiet_NaN();

// Holt-Winters as the replay compares with it: its parameters fitted once per selection period
// (the grid search is 36 passes over the history) and one pass at every step.
Forecaster replayHoltWinters(std::chrono::seconds step) {
  struct Fit {
    std::size_t steps_since = 0;
    bool fitted = false;
    HoltWintersParameters parameters;
  };
  auto fit = std::make_shared<Fit>();
  const auto period = static_cast<std::size_t>(std::max<std::int64_t>(1, kSelectionPeriod / step));
  return [step, fit, period](std::span<const float> history, int horizon_steps) {
    if (!fit->fitted || ++fit->steps_since >= period) {
      fit->parameters = fitHoltWinters(history, step, rhythm::kDay);
      fit->fitted = true;
      fit->steps_since = 0;
    }
    return holtWintersWith(history, step, rhythm::kDay, horizon_steps, fit->parameters);
  };
}

// The simple methods as a user would get them instead of ours: each read at t with no lag, as a
// normal rule's instant query reads the latest value (`options` without its lag_steps).
std::vector<BaselineReplay> replayBaselines(std::span<const float> values, std::size_t first,
                                            BacktestOptions options) {
  options.lag_steps = 0;
  const std::chrono::seconds step = options.step;
  std::vector<BaselineReplay> baselines;
  baselines.push_back(
      {Method::kLatestValue, backtest(values, first, options, [](std::span<const float> h, int n) {
         return std::vector<double>(static_cast<std::size_t>(n) + 1, latestFinite(h));
       })});
  baselines.push_back({Method::kSeasonalNaiveDay,
                       backtest(values, first, options, [step](std::span<const float> h, int n) {
                         return seasonalNaive(h, step, rhythm::kDay, n);
                       })});
  baselines.push_back({Method::kSeasonalNaiveWeek,
                       backtest(values, first, options, [step](std::span<const float> h, int n) {
                         return seasonalNaive(h, step, rhythm::kWeek, n);
                       })});
  baselines.push_back(
      {Method::kHoltWinters, backtest(values, first, options, replayHoltWinters(step))});
  return baselines;
}

}  // namespace

ObserverPageData replayHistory(const config::ForecastRule& rule, const GridHistory& history,
                               std::size_t replay_steps, std::optional<double> threshold,
                               std::optional<double> target) {
  const int horizon_steps = static_cast<int>(rule.horizon / rule.step);
  // The replay ends a horizon before the history does: the last forecasts need their future.
  const std::size_t replayable =
      history.length > static_cast<std::size_t>(horizon_steps) ? history.length - horizon_steps : 0;
  const std::size_t first = replayable > replay_steps ? replayable - replay_steps : 0;
  const auto history_steps = static_cast<std::size_t>(rule.history / rule.step);
  const BacktestOptions options{.step = rule.step,
                                .horizon_steps = horizon_steps,
                                .history_steps = history_steps,
                                .threshold = threshold,
                                .lag_steps = servingLagSteps(rule)};
  const ModelOptions model_options{.quantile = rule.quantile};
  // The grid step of index 0, for the selection's hour (the same one the service uses).
  const std::int64_t origin_step =
      std::chrono::duration_cast<std::chrono::seconds>(history.start.time_since_epoch()) /
      rule.step;

  ObserverPageData page;
  page.rule = rule.name;
  page.first_time = history.start;
  page.step = rule.step;
  page.horizon = rule.horizon;
  page.target = target;
  for (const GridSeries& series : history.series) {
    ObservedSeries observed;
    observed.labels = series.labels;
    const std::span<const float> values = series.values;
    SelectingForecaster selector(rule.step, horizon_steps, model_options, series.labels,
                                 static_cast<int>(options.lag_steps));
    // backtest hands the forecaster a window of `values`; where it ends says which step it is.
    // What is served `lag` steps later is the window that starts then, as the service serves it,
    // raised to the value at that step (the read's fresh instant query); backtest reads it from
    // index lag of the values handed back.
    const auto lag = static_cast<int>(options.lag_steps);
    observed.replay =
        backtest(values, first, options, [&](std::span<const float> window, int /*horizon*/) {
          const auto t =
              static_cast<std::int64_t>(window.data() - values.data() + window.size()) - 1;
          const Forecast forecast = selector.forecast(window, origin_step + t, lag);
          ++observed.served_steps[forecast.method];
          std::vector<double> served(static_cast<std::size_t>(lag) + 1, kReplayNaN);
          served.back() = servedAt(forecast, static_cast<std::size_t>(lag),
                                   values[static_cast<std::size_t>(t + lag)]);
          return served;
        });
    observed.baselines = replayBaselines(values, first, options);
    // What serves now: the forecast at the history's end, as the service makes it.
    const std::size_t begin = values.size() > history_steps ? values.size() - history_steps : 0;
    const Forecast now = selector.forecast(
        values.subspan(begin), origin_step + static_cast<std::int64_t>(values.size()) - 1);
    observed.method = now.method;
    observed.why = now.why;
    if (selector.selection()) {
      observed.sampling = servedSamplingText(now, rule.step, horizon_steps, 0);
    }
    page.series.push_back(std::move(observed));
  }
  return page;
}

}  // namespace metrics_adapter::forecast
