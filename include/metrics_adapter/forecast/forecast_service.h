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

// The forecast of one series of a rule's query.
struct SeriesForecast {
  std::map<std::string, std::string> labels;
  Forecast forecast;  // forecast.maximum is the served value
  double latest = 0;  // the latest actual value
};

// What one rule serves now.
struct RuleForecasts {
  config::ForecastRule rule;
  // The step-grid time the forecasts are made at: the last step with data, the same on every
  // replica that reads the same Prometheus (the served timestamp).
  Clock::time_point computed_at;
  std::vector<SeriesForecast> series;  // sorted by labels
};

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
  void refreshRule(RuleState& state, Clock::time_point now) const;
  std::shared_ptr<RuleState> find(const std::string& name) const;

  BackendSource backends_;
  ForecastServiceOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<RuleState>> rules_;
};

// The grid time at or before `now` for `step` (a multiple of step since the epoch).
Clock::time_point gridTimeAtOrBefore(Clock::time_point now, std::chrono::seconds step);

}  // namespace metrics_adapter::forecast
