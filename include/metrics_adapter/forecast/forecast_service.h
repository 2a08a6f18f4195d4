#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/forecast/model.h"
#include "metrics_adapter/forecast/range_fetch.h"
#include "metrics_adapter/forecast/selection.h"
#include "metrics_adapter/prometheus/backend_set.h"

namespace metrics_adapter::forecast {

// A step is read this long after its grid time: a scrape that started before that time commits
// its samples up to a scrape timeout later, and replicas must read the same value.
inline constexpr std::chrono::seconds kReadDelay{15};

// Refreshes may fail this many refresh intervals in a row before the forecast stops being served
// (503): a forecast made minutes ago still describes the next minutes, one made long ago does
// not. The forecasts made at a refresh cover the windows of every read until then.
inline constexpr int kStaleAfterIntervals = 3;

// How many steps old the last read step is when an HPA reads a served value, at most: the read
// delay plus the refresh interval (a value is served until the next refresh), rounded up to
// whole steps. The backtest and the observer page replay with this lag.
std::size_t servingLagSteps(const config::ForecastRule& rule);

// The forecast of one series of a rule's query.
struct SeriesForecast {
  std::map<std::string, std::string> labels;
  Forecast forecast;  // forecast.maximum is the served value
  double latest = 0;  // the latest actual value
};

// What one rule serves now.
struct RuleForecasts {
  config::ForecastRule rule;
  // The step-grid time the forecasts are made at: the last step read, the same on every replica
  // that reads the same Prometheus. Each forecast's windows start here.
  Clock::time_point computed_at;
  std::vector<SeriesForecast> series;  // sorted by labels
};

// The window a read at `now` is served: its forecast maximum over [start, end], the grid step at
// or before now and a horizon after it (so end >= now + horizon - step). `index` is the window's
// start in steps after computed_at, clamped to the windows computed (a read before computed_at,
// or later than the forecast reaches after failed refreshes, gets the nearest one).
struct ServedWindow {
  std::size_t index = 0;
  Clock::time_point start;
  Clock::time_point end;
};
ServedWindow servedWindow(const RuleForecasts& forecasts, Clock::time_point now);

// What `series` serves for a read at `now`: Forecast::windows at servedWindow(now).index.
double servedValue(const SeriesForecast& series, const ServedWindow& window);

// A copy of a rule's history, for the observer page and explain.
struct RuleHistory {
  config::ForecastRule rule;
  GridHistory history;
};

// The state of a rule for explain and for answers when there is no forecast.
struct RuleStatus {
  bool known = false;      // the rule is configured
  bool fetched = false;    // its history has been fetched at least once
  std::string last_error;  // the last refresh's failure ("" after a success)
  Clock::time_point last_success;
  std::size_t queries = 0;  // query_range calls sent for this rule so far
};

struct ForecastServiceOptions {
  std::chrono::milliseconds query_timeout{std::chrono::seconds(30)};
  // The first fetch is chunked to at most a day of steps (and Prometheus's 11,000 points) so
  // that one answer stays well under --prometheus-max-response-bytes.
  std::chrono::hours max_chunk_span{24};
  // A series' first method selection costs tens of milliseconds (docs/forecasting.md, "Cost"):
  // a start with 1,000 series would pay them all at once. At most this many run per refresh()
  // ahead of their series' own minute; the others serve the latest value ("selection pending")
  // until their minute comes, within kSelectionPeriod.
  std::size_t first_selections_per_refresh = 10;
};

// Keeps each forecastRule's history on its step grid (fetched once with query_range, then only
// the new steps on each refresh) and its latest forecasts. Replicas that read the same
// Prometheus compute the same forecasts: the grid is aligned to the epoch and the model is
// deterministic. Thread-safe; refresh() is meant for one thread at a time.
class ForecastService {
 public:
  // The backends in force (a reload may replace them); each rule's history is read from the one
  // its `backend` names.
  using BackendSource = std::function<std::shared_ptr<const prometheus::BackendSet>()>;

  ForecastService(BackendSource backends, ForecastServiceOptions options);
  ~ForecastService();

  // Makes `rules` the configured rules (state of rules that did not change is kept) and
  // refreshes every rule that is due at `now`. Prometheus failures are recorded per rule (see
  // status) and logged; the last forecasts keep serving.
  void refresh(const std::vector<config::ForecastRule>& rules, Clock::time_point now);

  // The latest forecasts of the rule named `name`, or null when there is none (yet).
  std::shared_ptr<const RuleForecasts> forecasts(const std::string& name) const;
  RuleStatus status(const std::string& name) const;
  std::optional<RuleHistory> history(const std::string& name) const;
  // The names of the configured rules, sorted (as of the last refresh()).
  std::vector<std::string> names() const;

 private:
  struct RuleState;
  // `first_selections`: how many first selections may still run early in this refresh().
  void refreshRule(RuleState& state, Clock::time_point now, std::size_t& first_selections) const;
  std::shared_ptr<RuleState> find(const std::string& name) const;

  BackendSource backends_;
  ForecastServiceOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<RuleState>> rules_;
};

// The grid time at or before `now` for `step` (a multiple of step since the epoch).
Clock::time_point gridTimeAtOrBefore(Clock::time_point now, std::chrono::seconds step);

}  // namespace metrics_adapter::forecast
