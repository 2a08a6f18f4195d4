#pragma once

#include <cstddef>
#include <optional>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/forecast/observer_page.h"
#include "metrics_adapter/forecast/range_fetch.h"

namespace metrics_adapter::forecast {

// Replays the last `replay_steps` steps of every series of `history` with `rule`'s model and
// horizon (each forecast sees only the history before its step, up to rule.history of it), for
// the observer page and `metrics-adapter forecast backtest|observe`. `threshold` is the level
// whose upward crossings give the lead times; `target` the HPA's averageValue for the page.
ObserverPageData replayHistory(const config::ForecastRule& rule, const GridHistory& history,
                               std::size_t replay_steps, std::optional<double> threshold,
                               std::optional<double> target);

}  // namespace metrics_adapter::forecast
