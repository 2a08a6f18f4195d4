#pragma once

#include <chrono>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>

#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/forecast/observer_page.h"
#include "metrics_adapter/forecast/range_fetch.h"
#include "metrics_adapter/prometheus/prometheus_api.h"

namespace metrics_adapter::cli {

// The words of `metrics-adapter forecast backtest|observe` (docs/forecasting.md "Backtest and
// observe from the command line").
struct ForecastCommandOptions {
  std::string action;  // "backtest" or "observe"
  std::string config_file;
  std::string rule;                 // "" = the config's only forecastRule
  int days = 1;                     // replayed days
  std::string output;               // backtest: "text" (default) or "json"; observe: the HTML file
  std::optional<double> threshold;  // backtest: level whose upward crossings give lead times
  std::optional<double> target;     // observe: the HPA's averageValue (replicas chart)
  app::AdapterOptions shared;       // the Prometheus client flags
};

// Throws FlagError.
ForecastCommandOptions parseForecastFlags(std::span<const std::string> args);

// The rule's history for replaying the last `days` days: `days` days plus the rule's own
// history before them and a horizon after, on the rule's step grid ending at `now`.
forecast::GridHistory fetchReplayHistory(prometheus::PrometheusApi& prometheus,
                                         const config::ForecastRule& rule, int days,
                                         forecast::Clock::time_point now,
                                         std::chrono::milliseconds timeout);

// The backtest report: JSON with mape, underForecastRatio, leadTimeSeconds and points over
// every series (points-weighted MAPE and under-forecast share, the median of all leads), and
// the same per series; or the text table.
std::string backtestReport(const forecast::ObserverPageData& replay, bool json);

// `metrics-adapter forecast backtest|observe ...`; `args` are the words after "forecast".
// Returns the exit code: 0 done, 1 bad flags or config, 2 Prometheus failed.
int runForecastCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// forecast's usage and flags, for --help and for an error.
std::string forecastUsage();

}  // namespace metrics_adapter::cli
