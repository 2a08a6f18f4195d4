#include "metrics_adapter/forecast/wake_ups.h"

#include <algorithm>
#include <cmath>

namespace metrics_adapter::forecast {

std::vector<WakeUp> wakeUps(const std::vector<BacktestPoint>& points, double target) {
  // As the HPA computes an AverageValue target's replicas: ceil(value / target), never below 0.
  const auto at_zero = [target](double value) { return std::ceil(value / target) <= 0; };
  std::vector<WakeUp> result;
  bool forecast_was_zero = false;
  bool actual_was_zero = false;
  std::optional<std::size_t> demand_woke;  // the demand left 0 this night, before the forecast
  bool waiting_for_demand = false;         // the last forecast wake-up has no demand one yet
  for (const BacktestPoint& point : points) {
    if (!std::isfinite(point.forecast) || !std::isfinite(point.actual)) continue;
    const bool forecast_zero = at_zero(point.forecast);
    const bool actual_zero = at_zero(point.actual);
    const bool demand_leaves = !actual_zero && actual_was_zero;
    if (forecast_zero && !forecast_was_zero) {  // a new night
      demand_woke.reset();
      waiting_for_demand = false;
    }
    if (!forecast_zero && forecast_was_zero) {
      WakeUp wake_up{.forecast_index = point.index, .reactive_index = std::nullopt};
      if (demand_woke) {
        wake_up.reactive_index = demand_woke;  // the forecast was late
      } else if (demand_leaves) {
        wake_up.reactive_index = point.index;
      } else {
        waiting_for_demand = true;
      }
      result.push_back(wake_up);
      demand_woke.reset();
    } else if (demand_leaves) {
      if (waiting_for_demand) {
        result.back().reactive_index = point.index;
        waiting_for_demand = false;
      } else if (forecast_zero) {
        demand_woke = point.index;
      }
    }
    forecast_was_zero = forecast_zero;
    actual_was_zero = actual_zero;
  }
  return result;
}

}  // namespace metrics_adapter::forecast
