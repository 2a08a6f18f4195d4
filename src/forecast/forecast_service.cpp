#include "metrics_adapter/forecast/forecast_service.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace metrics_adapter::forecast {
namespace {

using std::chrono::seconds;

// Steps re-read on every refresh: the newest steps may have been evaluated before their last
// scrape arrived, so they are read again once it has.
constexpr std::int64_t kRereadSteps = 2;

// A failed refresh is retried after this, or after the rule's refresh interval if shorter.
constexpr seconds kRetryAfterFailure{10};

// A series without a value for this long (or 5 steps, if longer) has ended, as Prometheus's
// lookback for instant queries says: it is not served (a coarse series: see seriesLookback).
constexpr seconds kSeriesLookback{300};

constexpr float kNoValue = std::numeric_limits<float>::quiet_NaN();

std::size_t stepsBetween(Clock::time_point from, Clock::time_point to, seconds step) {
  return static_cast<std::size_t>(std::chrono::duration_cast<seconds>(to - from) / step);
}

// Moves `history` onto the grid of `length` steps from `start`, keeping the values that fall in
// it and NaN for the new steps.
void moveWindow(GridHistory& history, Clock::time_point start, std::size_t length) {
  const std::size_t dropped =
      start > history.start ? stepsBetween(history.start, start, history.step) : 0;
  for (GridSeries& series : history.series) {
    const std::size_t erased = std::min(dropped, series.values.size());
    series.values.erase(series.values.begin(),
                        series.values.begin() + static_cast<std::ptrdiff_t>(erased));
    series.values.resize(length, kNoValue);
  }
  history.start = start;
  history.length = length;
}

// Writes the steps `recent` holds over `history` (same step; recent starts on history's grid)
// and drops the series that have no value left.
void mergeRecent(GridHistory& history, const GridHistory& recent) {
  std::map<std::map<std::string, std::string>, std::size_t> index_of;
  for (std::size_t i = 0; i < history.series.size(); ++i) index_of[history.series[i].labels] = i;
  const std::size_t offset = stepsBetween(history.start, recent.start, history.step);
  for (const GridSeries& fresh : recent.series) {
    auto [found, added] = index_of.try_emplace(fresh.labels, history.series.size());
    if (added) {
      history.series.push_back(GridSeries{.labels = fresh.labels,
                                          .values = std::vector<float>(history.length, kNoValue)});
    }
    std::vector<float>& values = history.series[found->second].values;
    for (std::size_t i = 0; i < fresh.values.size() && offset + i < values.size(); ++i) {
      values[offset + i] = fresh.values[i];
    }
  }
  std::erase_if(history.series, [](const GridSeries& series) {
    return std::all_of(series.values.begin(), series.values.end(),
                       [](float value) { return std::isnan(value); });
  });
  std::sort(history.series.begin(), history.series.end(),
            [](const GridSeries& a, const GridSeries& b) { return a.labels < b.labels; });
}

// The latest value among the last `window` steps of `values`, or nullopt.
std::optional<double> latestValue(const std::vector<float>& values, std::size_t window) {
  for (std::size_t i = 0; i < values.size() && i < window; ++i) {
    const float value = values[values.size() - 1 - i];
    if (!std::isnan(value)) return value;
  }
  return std::nullopt;
}

using Selectors = std::map<std::map<std::string, std::string>, SelectingForecaster>;

// How many steps back a series' latest value may be and the series still be served. A series
// sampled more coarsely than the lookback shows each sample for the lookback and then nothing
// until the next one (a 30-minute scrape on a 1-minute grid, for 25 steps of every 30): it has
// ended only when its own spacing has passed as well, as its selection read it.
std::size_t seriesLookback(std::size_t lookback, Selectors::const_iterator found,
                           const Selectors& selectors) {
  if (found == selectors.end() || !found->second.selection()) return lookback;
  const std::size_t spacing = found->second.selection()->sampling.spacing_steps;
  return spacing > 1 ? lookback + spacing : lookback;
}

// The windows a refresh at `now` computes: every read until the forecast goes stale may start
// its window that many steps after the last step read (`computed_at`).
int leadSteps(const config::ForecastRule& rule, Clock::time_point computed_at,
              Clock::time_point now) {
  const Clock::duration reach =
      std::max<Clock::duration>(now - computed_at, Clock::duration::zero()) +
      (kStaleAfterIntervals + 1) * rule.refresh_interval;
  const std::int64_t steps = (reach + rule.step - Clock::duration(1)) / rule.step;
  // The config bounds a rule's history to 100,000 steps; a lead beyond it is not meaningful.
  return static_cast<int>(std::clamp<std::int64_t>(steps, 0, 100000));
}

// The forecasts at the history's end, each series by its own selected method; `selectors` keeps
// each series' selection from one refresh to the next (only the series still there are kept).
std::shared_ptr<const RuleForecasts> computeForecasts(const config::ForecastRule& rule,
                                                      const GridHistory& history,
                                                      Selectors& selectors, Clock::time_point now,
                                                      std::size_t& first_selections) {
  auto result = std::make_shared<RuleForecasts>();
  result->rule = rule;
  const auto last_step = static_cast<std::int64_t>(history.length > 0 ? history.length - 1 : 0);
  result->computed_at = history.start + history.step * last_step;
  const int horizon_steps = static_cast<int>(rule.horizon / rule.step);
  const int lead_steps = leadSteps(rule, result->computed_at, now);
  const std::size_t lookback =
      std::max<std::size_t>(5, static_cast<std::size_t>(kSeriesLookback / rule.step));
  const std::int64_t last_grid_step =
      std::chrono::duration_cast<seconds>(result->computed_at.time_since_epoch()) / rule.step;
  Selectors kept;
  for (const GridSeries& series : history.series) {
    auto found = selectors.find(series.labels);
    const std::optional<double> latest =
        latestValue(series.values, seriesLookback(lookback, found, selectors));
    if (!latest) continue;
    auto [selector, added] = kept.try_emplace(
        series.labels,
        found != selectors.end()
            ? std::move(found->second)
            : SelectingForecaster(rule.step, horizon_steps, ModelOptions{.quantile = rule.quantile},
                                  series.labels, static_cast<int>(servingLagSteps(rule))));
    SelectingForecaster& forecaster = selector->second;
    const bool first = !forecaster.selection().has_value();
    const auto when = first && first_selections > 0
                          ? SelectingForecaster::FirstSelection::kNow
                          : SelectingForecaster::FirstSelection::kAtItsMinute;
    Forecast forecast = forecaster.forecast(series.values, last_grid_step, lead_steps, when);
    if (first && when == SelectingForecaster::FirstSelection::kNow) --first_selections;
    if (!std::isfinite(forecast.maximum)) continue;
    result->series.push_back(SeriesForecast{.labels = series.labels,
                                            .forecast = std::move(forecast),
                                            .latest = *latest,
                                            .pending = !forecaster.selection().has_value()});
  }
  selectors = std::move(kept);
  result->last_grid_step = last_grid_step;
  result->lead_steps = lead_steps;
  return result;
}

RuleStatus knownRule() {
  RuleStatus status;
  status.known = true;
  return status;
}

}  // namespace

struct ForecastService::RuleState {
  explicit RuleState(config::ForecastRule configured) : rule(std::move(configured)) {}

  const config::ForecastRule rule;
  // Held by a refresh and by a batch of first selections: they take turns. It guards next_due
  // and selectors, and the writes of history (so its holder may read history unlocked).
  std::mutex compute;
  Clock::time_point next_due{};
  Selectors selectors;
  mutable std::mutex mutex;  // guards what follows
  GridHistory history;
  std::shared_ptr<const RuleForecasts> forecasts;
  std::shared_ptr<const FreshValues> fresh;
  Clock::time_point fresh_tried_at{};
  RuleStatus status = knownRule();
};

std::size_t servingLagSteps(const config::ForecastRule& rule) {
  const Clock::duration lag = kReadDelay + rule.refresh_interval;
  return static_cast<std::size_t>((lag + rule.step - Clock::duration(1)) / rule.step);
}

ServedWindow servedWindow(const RuleForecasts& forecasts, Clock::time_point now) {
  const seconds step = forecasts.rule.step;
  std::size_t computed = 1;
  for (const SeriesForecast& series : forecasts.series) {
    computed = std::max(computed, series.forecast.windows.size());
  }
  const std::int64_t ahead =
      now > forecasts.computed_at ? (now - forecasts.computed_at) / Clock::duration(step) : 0;
  ServedWindow window;
  window.index = std::min(static_cast<std::size_t>(ahead), computed - 1);
  window.start = forecasts.computed_at + step * static_cast<std::int64_t>(window.index);
  window.end = window.start + forecasts.rule.horizon / step * step;
  return window;
}

double servedValue(const SeriesForecast& series, const ServedWindow& window,
                   std::optional<double> fresh) {
  return servedAt(series.forecast, window.index,
                  fresh.value_or(std::numeric_limits<double>::quiet_NaN()));
}

std::optional<double> freshValue(const FreshValues* fresh,
                                 const std::map<std::string, std::string>& labels,
                                 Clock::time_point now) {
  if (fresh == nullptr || !fresh->usableAt(now)) return std::nullopt;
  auto found = fresh->values.find(labels);
  if (found == fresh->values.end() || !std::isfinite(found->second)) return std::nullopt;
  return found->second;
}

std::string latestValueText(const RuleForecasts& forecasts, const SeriesForecast& series,
                            const FreshValues* fresh, Clock::time_point now) {
  const auto ago = [now](Clock::time_point t) {
    return fmt::format("{:.1f} s ago", std::chrono::duration<double>(now - t).count());
  };
  const std::optional<double> value = freshValue(fresh, series.labels, now);
  std::string text =
      value ? fmt::format(
                  "{:g} from the rule's fresh read (an instant query) {}, plus "
                  "Prometheus's own age of at most a scrape interval",
                  *value, ago(fresh->read_at))
            : fmt::format("{:g} from the history's last step, {}: no fresh read in the last {} s",
                          series.latest, ago(forecasts.computed_at),
                          std::chrono::seconds(kFreshMaxAge).count());
  if (series.pending) {
    const auto before = std::count_if(forecasts.series.begin(), forecasts.series.end(),
                                      [&series](const SeriesForecast& other) {
                                        return other.pending && other.labels < series.labels;
                                      });
    text += fmt::format(
        "; first selection pending: the background worker selects {} of the "
        "rule's series before it",
        before);
  }
  return text;
}

Clock::time_point freshReadTime(Clock::time_point now) {
  const auto since_epoch = std::chrono::duration_cast<std::chrono::milliseconds>(
      (now - kFreshSettle).time_since_epoch());
  return Clock::time_point(since_epoch - since_epoch % std::chrono::milliseconds(kFreshInterval));
}

Clock::time_point gridTimeAtOrBefore(Clock::time_point now, seconds step) {
  const auto since_epoch = std::chrono::duration_cast<seconds>(now.time_since_epoch());
  return Clock::time_point(since_epoch - since_epoch % step);
}

ForecastService::ForecastService(BackendSource backends, ForecastServiceOptions options)
    : backends_(std::move(backends)), options_(options) {}

ForecastService::~ForecastService() = default;

void ForecastService::refresh(const std::vector<config::ForecastRule>& rules,
                              Clock::time_point now) {
  std::vector<std::shared_ptr<RuleState>> due;
  {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::shared_ptr<RuleState>> current;
    for (const config::ForecastRule& rule : rules) {
      auto kept = rules_.find(rule.name);
      current[rule.name] = kept != rules_.end() && kept->second->rule == rule
                               ? kept->second
                               : std::make_shared<RuleState>(rule);
    }
    rules_ = std::move(current);
    configured_ = true;
    for (const auto& [name, state] : rules_) due.push_back(state);
  }
  std::size_t first_selections = options_.first_selections_per_refresh;
  for (const auto& state : due) refreshRule(*state, now, first_selections);
}

void ForecastService::refreshRule(RuleState& state, Clock::time_point now,
                                  std::size_t& first_selections) const {
  std::lock_guard compute(state.compute);
  if (now < state.next_due) return;
  const config::ForecastRule& rule = state.rule;
  const Clock::time_point end = gridTimeAtOrBefore(now - kReadDelay, rule.step);
  const auto length = static_cast<std::size_t>(rule.history / rule.step);
  const Clock::time_point start = end - rule.step * static_cast<std::int64_t>(length - 1);
  try {
    GridHistory history;
    Clock::time_point fetch_from = start;
    {
      std::lock_guard lock(state.mutex);
      if (state.status.fetched) {
        history = state.history;  // a copy: readers keep the old one until the swap below
        const Clock::time_point known_end =
            history.start + history.step * static_cast<std::int64_t>(history.length);
        fetch_from = std::max(start, known_end - rule.step * (kRereadSteps + 1));
      }
    }
    const std::size_t chunk_points = std::clamp<std::size_t>(
        static_cast<std::size_t>(std::chrono::duration_cast<seconds>(options_.max_chunk_span) /
                                 rule.step),
        1, kMaxPointsPerQuery);
    const std::shared_ptr<const prometheus::BackendSet> backends = backends_();
    const prometheus::Backend* backend = backends ? backends->find(rule.backend) : nullptr;
    if (!backend) {
      throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                        "not configured");
    }
    // History reads are background work of their own size: options_.query_timeout, not the
    // backend's request deadline.
    GridHistory recent = fetchGridHistory(*backend->api, rule.query, fetch_from, end, rule.step,
                                          options_.query_timeout, chunk_points);
    const std::size_t queries = planChunks(fetch_from, end, rule.step, chunk_points).size();
    if (fetch_from == start) {
      history = std::move(recent);
      history.length = length;
      for (GridSeries& series : history.series) series.values.resize(length, kNoValue);
    } else {
      moveWindow(history, start, length);
      mergeRecent(history, recent);
    }
    auto forecasts = computeForecasts(rule, history, state.selectors, now, first_selections);
    std::lock_guard lock(state.mutex);
    state.history = std::move(history);
    state.forecasts = std::move(forecasts);
    state.status.fetched = true;
    state.status.last_error.clear();
    state.status.last_success = now;
    state.status.queries += queries;
    state.next_due = now + rule.refresh_interval;
  } catch (const prometheus::PrometheusError& e) {
    SPDLOG_WARN("forecast {}: refresh from backend {} failed: {}", rule.name, rule.backend,
                e.detail());
    std::lock_guard lock(state.mutex);
    state.status.last_error = "backend \"" + rule.backend + "\": " + e.what();
    state.next_due = now + std::min<Clock::duration>(rule.refresh_interval, kRetryAfterFailure);
  }
}

void ForecastService::readFresh(Clock::time_point now) {
  std::vector<std::shared_ptr<RuleState>> states;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, state] : rules_) states.push_back(state);
  }
  const std::shared_ptr<const prometheus::BackendSet> backends = backends_();
  const Clock::time_point at = freshReadTime(now);
  for (const auto& state : states) {
    const config::ForecastRule& rule = state->rule;
    {
      std::lock_guard lock(state->mutex);
      if (state->fresh_tried_at >= at) continue;  // one call per evaluation time, failed or not
      state->fresh_tried_at = at;
    }
    const prometheus::Backend* backend = backends ? backends->find(rule.backend) : nullptr;
    try {
      if (!backend) {
        throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                          "not configured");
      }
      const prometheus::QueryResult answer =
          backend->api->query(rule.query, at, std::chrono::milliseconds(kFreshTimeout));
      auto fresh = std::make_shared<FreshValues>();
      fresh->read_at = at;
      for (const prometheus::Sample& sample : answer.samples) {
        fresh->values.emplace(sample.labels, sample.value);
      }
      std::lock_guard lock(state->mutex);
      state->fresh = std::move(fresh);
      state->status.fresh_error.clear();
      ++state->status.fresh_queries;
    } catch (const prometheus::PrometheusError& e) {
      SPDLOG_DEBUG("forecast {}: fresh read from backend {} failed: {}", rule.name, rule.backend,
                   e.detail());
      std::lock_guard lock(state->mutex);
      state->status.fresh_error = "backend \"" + rule.backend + "\": " + e.what();
      ++state->status.fresh_queries;
    }
  }
}

std::size_t ForecastService::selectPending(std::chrono::steady_clock::duration budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  std::vector<std::shared_ptr<RuleState>> states;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, state] : rules_) states.push_back(state);
  }
  std::size_t left = 0;
  for (const auto& state : states) {
    std::lock_guard compute(state->compute);
    std::shared_ptr<const RuleForecasts> current;
    {
      std::lock_guard lock(state->mutex);
      current = state->forecasts;
    }
    if (!current) continue;
    std::shared_ptr<RuleForecasts> next;
    for (std::size_t i = 0; i < current->series.size(); ++i) {
      const SeriesForecast& series = current->series[i];
      if (!series.pending) continue;
      if (std::chrono::steady_clock::now() >= deadline) {
        ++left;
        continue;
      }
      auto selector = state->selectors.find(series.labels);
      const GridSeries* values = findSeries(state->history.series, series.labels);
      if (selector == state->selectors.end() || values == nullptr) continue;
      // The same forecast the refresh that made `current` would have made with the selection.
      Forecast forecast =
          selector->second.forecast(values->values, current->last_grid_step, current->lead_steps,
                                    SelectingForecaster::FirstSelection::kNow);
      if (!next) next = std::make_shared<RuleForecasts>(*current);
      next->series[i].forecast = std::move(forecast);
      next->series[i].pending = false;
    }
    if (next) {
      std::lock_guard lock(state->mutex);
      state->forecasts = std::move(next);
    }
  }
  return left;
}

SelectionProgress ForecastService::selectionProgress() const {
  std::vector<std::shared_ptr<RuleState>> states;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, state] : rules_) states.push_back(state);
  }
  SelectionProgress progress;
  {
    std::lock_guard lock(mutex_);
    progress.configured = configured_;
  }
  progress.rules = states.size();
  for (const auto& state : states) {
    std::lock_guard lock(state->mutex);
    if (!state->status.last_error.empty()) ++progress.rules_refreshed;
    if (!state->status.fetched || !state->forecasts) continue;
    if (state->status.last_error.empty()) ++progress.rules_refreshed;
    progress.series += state->forecasts->series.size();
    for (const SeriesForecast& series : state->forecasts->series) {
      progress.pending += series.pending ? 1 : 0;
    }
  }
  return progress;
}

std::shared_ptr<const FreshValues> ForecastService::fresh(const std::string& name) const {
  auto state = find(name);
  if (!state) return nullptr;
  std::lock_guard lock(state->mutex);
  return state->fresh;
}

std::shared_ptr<ForecastService::RuleState> ForecastService::find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto found = rules_.find(name);
  return found == rules_.end() ? nullptr : found->second;
}

std::shared_ptr<const RuleForecasts> ForecastService::forecasts(const std::string& name) const {
  auto state = find(name);
  if (!state) return nullptr;
  std::lock_guard lock(state->mutex);
  return state->forecasts;
}

RuleStatus ForecastService::status(const std::string& name) const {
  auto state = find(name);
  if (!state) return RuleStatus{};
  std::lock_guard lock(state->mutex);
  return state->status;
}

std::vector<std::string> ForecastService::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  names.reserve(rules_.size());
  for (const auto& [name, state] : rules_) names.push_back(name);
  return names;
}

std::optional<RuleHistory> ForecastService::history(const std::string& name) const {
  auto state = find(name);
  if (!state) return std::nullopt;
  std::lock_guard lock(state->mutex);
  if (!state->status.fetched) return std::nullopt;
  return RuleHistory{.rule = state->rule, .history = state->history};
}

}  // namespace metrics_adapter::forecast
