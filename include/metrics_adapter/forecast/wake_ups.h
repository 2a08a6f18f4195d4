#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "metrics_adapter/forecast/backtest.h"

// Scale to zero (docs/forecasting.md "Scale to zero at night"): when an HPA with minReplicas: 0
// and an AverageValue target on the forecast would have moved the Deployment off 0 replicas in a
// replay, and when one on the demand itself (a reactive HPA) would have.
namespace metrics_adapter::forecast {

struct WakeUp {
  std::size_t forecast_index = 0;  // the replayed step at which ceil(forecast / target) left 0
  // The step at which ceil(actual / target) left 0 in the same night (the forecast's run of 0
  // replicas up to the next one): before forecast_index when the forecast was late; nullopt when
  // the demand did not leave 0 that night within the replay.
  std::optional<std::size_t> reactive_index;
};

// Every move off 0 replicas of the served forecast in `points` (in replay order), each with the
// demand's own move off 0 that followed the same night. A step with a non-finite value is
// skipped. `target` must be positive.
std::vector<WakeUp> wakeUps(const std::vector<BacktestPoint>& points, double target);

}  // namespace metrics_adapter::forecast
