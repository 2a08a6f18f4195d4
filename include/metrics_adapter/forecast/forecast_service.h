#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
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

// How often each rule's query is read with an instant query, as a normal rule reads it for an
// answer: the value of each series now, which a read serves as the latest value and raises its
// forecast to (servedAt). One call per rule per interval, whatever the number of reads. The
// query is evaluated at a multiple of the interval since the epoch, kFreshSettle before it is
// sent, so that replicas reading the same Prometheus read the same values; a served value's
// newest sample is then at most a scrape interval + kFreshInterval + kFreshSettle (+ the tick
// that calls readFresh) old.
inline constexpr std::chrono::seconds kFreshInterval{4};
// Time for a scrape that started before an evaluation time to be appended.
inline constexpr std::chrono::milliseconds kFreshSettle{500};
// A fresh read older than this is not used (its calls fail): reads fall back to the history's
// last step, as before there were fresh reads.
inline constexpr std::chrono::seconds kFreshMaxAge{4 * kFreshInterval};
// How long one fresh read may take.
inline constexpr std::chrono::seconds kFreshTimeout{4};

// A rule's last fresh read: each series' value at the time of the instant query.
struct FreshValues {
  Clock::time_point read_at;
  std::map<std::map<std::string, std::string>, double> values;
  // Whether a read at `now` may use it: at most kFreshMaxAge old.
  bool usableAt(Clock::time_point now) const { return now - read_at <= kFreshMaxAge; }
};

// The forecast of one series of a rule's query.
struct SeriesForecast {
  std::map<std::string, std::string> labels;
  Forecast forecast;  // forecast.maximum is the served value
  double latest = 0;  // the latest actual value on the grid
  // Its first method selection has not run yet: it serves the latest value until the
  // background worker (selectPending) or its own minute gets to it.
  bool pending = false;
};

// What one rule serves now.
struct RuleForecasts {
  config::ForecastRule rule;
  // The step-grid time the forecasts are made at: the last step read, the same on every replica
  // that reads the same Prometheus. Each forecast's windows start here.
  Clock::time_point computed_at;
  std::vector<SeriesForecast> series;  // sorted by labels
  // The grid step of computed_at (steps since the epoch) and how many windows after it each
  // forecast holds: what a first selection made later needs to make the same forecast.
  std::int64_t last_grid_step = 0;
  int lead_steps = 0;
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

// What `series` serves for a read in `window`, knowing `fresh`, its value from the rule's last
// fresh read (nullopt: none usable): servedAt.
double servedValue(const SeriesForecast& series, const ServedWindow& window,
                   std::optional<double> fresh = std::nullopt);

// The series labelled `labels` in a vector sorted by labels (a rule's forecasts, a history), or
// null.
template <typename Series>
const Series* findSeries(const std::vector<Series>& sorted,
                         const std::map<std::string, std::string>& labels) {
  auto found = std::lower_bound(
      sorted.begin(), sorted.end(), labels,
      [](const Series& series, const auto& wanted) { return series.labels < wanted; });
  return found != sorted.end() && found->labels == labels ? &*found : nullptr;
}

// The value of the series labelled `labels` in `fresh` when that read is usable at `now`;
// nullopt otherwise.
std::optional<double> freshValue(const FreshValues* fresh,
                                 const std::map<std::string, std::string>& labels,
                                 Clock::time_point now);

// For the observer page: where a read at `now` takes the series' latest value from and how old
// that information is, e.g. "41.2 from the rule's fresh read (an instant query) 2.1 s ago, plus
// Prometheus's own age of at most a scrape interval" or "41.2 from the history's last step, 75.0 s
// ago: no fresh read in the last 16 s"; and for a series whose first selection is pending, how
// many of the rule's series the background worker selects before it.
std::string latestValueText(const RuleForecasts& forecasts, const SeriesForecast& series,
                            const FreshValues* fresh, Clock::time_point now);

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
  std::size_t queries = 0;        // query_range calls sent for this rule so far
  std::size_t fresh_queries = 0;  // instant queries of readFresh so far
  std::string fresh_error;        // the last fresh read's failure ("" after a success)
};

// How far the first method selections are, over every configured rule.
struct SelectionProgress {
  bool configured = false;  // refresh() has been given the rules
  std::size_t rules = 0;
  // Rules whose first refresh has run: fetched, or failed (those answer 503 with the cause, and
  // a Prometheus that is down must not hold a rollout for them).
  std::size_t rules_refreshed = 0;
  std::size_t series = 0;
  std::size_t pending = 0;  // series still waiting for their first selection
  bool done() const { return configured && rules_refreshed == rules && pending == 0; }
};

struct ForecastServiceOptions {
  std::chrono::milliseconds query_timeout{std::chrono::seconds(30)};
  // The first fetch is chunked to at most a day of steps (and Prometheus's 11,000 points) so
  // that one answer stays well under --prometheus-max-response-bytes.
  std::chrono::hours max_chunk_span{24};
  // A series' first method selection costs tens of milliseconds (docs/forecasting.md, "Cost"):
  // a start with 1,000 series would hold up every rule's refresh. At most this many run in a
  // refresh(); the others serve the latest value ("selection pending") until selectPending()
  // (the server's background worker) or their own minute within kSelectionPeriod gets to them.
  // The tools, which answer once, select every series in their refresh (the default); the
  // server sets 0.
  std::size_t first_selections_per_refresh = std::numeric_limits<std::size_t>::max();
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

  // Reads each configured rule's query with one instant query at freshReadTime(now), unless it
  // has been read at that time already (FreshValues). Meant to be called more often than
  // kFreshInterval. A failure is recorded (RuleStatus::fresh_error) and the last read is kept
  // until it is too old.
  void readFresh(Clock::time_point now);

  // Runs pending first selections, rule by rule and series by series in label order, until none
  // is left or `budget` has been spent; each rule's forecasts are swapped in after its batch.
  // Returns how many are still pending. Meant for one background thread (the refresh may run
  // beside it: a rule's refresh and its selections take turns).
  std::size_t selectPending(std::chrono::steady_clock::duration budget);
  SelectionProgress selectionProgress() const;

  // The latest forecasts of the rule named `name`, or null when there is none (yet).
  std::shared_ptr<const RuleForecasts> forecasts(const std::string& name) const;
  // The rule's last fresh read, or null when there has been none.
  std::shared_ptr<const FreshValues> fresh(const std::string& name) const;
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
  bool configured_ = false;  // refresh() has run: rules_ is the configured rules
};

// The evaluation time of the fresh read due at `now`: the multiple of kFreshInterval since the
// epoch at or before now - kFreshSettle.
Clock::time_point freshReadTime(Clock::time_point now);

// The grid time at or before `now` for `step` (a multiple of step since the epoch).
Clock::time_point gridTimeAtOrBefore(Clock::time_point now, std::chrono::seconds step);

}  // namespace metrics_adapter::forecast
