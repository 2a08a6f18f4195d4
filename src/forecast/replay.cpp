#include "metrics_adapter/forecast/replay.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "metrics_adapter/forecast/backtest.h"

namespace metrics_adapter::forecast {

ObserverPageData replayHistory(const config::ForecastRule& rule, const GridHistory& history,
                               std::size_t replay_steps, std::optional<double> threshold,
                               std::optional<double> target) {
  const int horizon_steps = static_cast<int>(rule.horizon / rule.step);
  // The replay ends a horizon before the history does: the last forecasts need their future.
  const std::size_t replayable =
      history.length > static_cast<std::size_t>(horizon_steps) ? history.length - horizon_steps : 0;
  const std::size_t first = replayable > replay_steps ? replayable - replay_steps : 0;
  const BacktestOptions options{.step = rule.step,
                                .horizon_steps = horizon_steps,
                                .history_steps = static_cast<std::size_t>(rule.history / rule.step),
                                .threshold = threshold};
  const Forecaster forecaster = modelForecaster(rule.step, ModelOptions{.quantile = rule.quantile});

  ObserverPageData page;
  page.rule = rule.name;
  page.first_time = history.start;
  page.step = rule.step;
  page.horizon = rule.horizon;
  page.target = target;
  for (const GridSeries& series : history.series) {
    ObservedSeries observed;
    observed.labels = series.labels;
    observed.replay = backtest(series.values, first, options, forecaster);
    observed.why = forecastAhead(series.values, rule.step, horizon_steps,
                                 ModelOptions{.quantile = rule.quantile})
                       .why;
    page.series.push_back(std::move(observed));
  }
  return page;
}

}  // namespace metrics_adapter::forecast
