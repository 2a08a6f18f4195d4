#include "metrics_adapter/forecast/forecast_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "unit/fake_prometheus.h"

namespace metrics_adapter::forecast {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr double kPi = 3.14159265358979;

// A daily wave per workload, as Prometheus would evaluate it at any time.
double demandAt(double t, double phase) {
  return 50 + 30 * std::sin(2 * kPi * (t / 86400.0 + phase));
}

double epochSeconds(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// A Prometheus holding two workloads' demand from `first_data` on; `b` ends at `b_ends`.
struct WaveServer {
  Clock::time_point first_data;
  Clock::time_point b_ends = Clock::time_point::max();

  prometheus::RangeResult operator()(const testing::FakePrometheus::RangeCall& call) const {
    prometheus::RangeResult result;
    for (const char* workload : {"a", "b"}) {
      prometheus::RangeSeries series;
      series.labels = {{"workload", workload}};
      for (auto t = call.start; t <= call.end; t += call.step) {
        if (t < first_data || (workload[0] == 'b' && t > b_ends)) continue;
        series.times.push_back(epochSeconds(t));
        series.values.push_back(demandAt(epochSeconds(t), workload[0] == 'a' ? 0 : 0.25));
      }
      if (!series.times.empty()) result.series.push_back(std::move(series));
    }
    return result;
  }
};

config::ForecastRule waveRule() {
  config::ForecastRule rule;
  rule.name = "demand_forecast";
  rule.query = "sum by (workload) (demand)";
  return rule;  // 7 days at 1m, horizon 10m, refresh 1m
}

// A fixed "now", on no particular grid time.
const Clock::time_point kNow = Clock::time_point(seconds(1'790'000'017));

class ForecastServiceTest : public ::testing::Test {
 protected:
  std::shared_ptr<testing::FakePrometheus> prometheus_ =
      std::make_shared<testing::FakePrometheus>();
  ForecastService service_{testing::onlyBackend(prometheus_), ForecastServiceOptions{}};
};

TEST_F(ForecastServiceTest, FirstRefreshReadsTheHistoryInDayChunks) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  service_.refresh({waveRule()}, kNow);

  // 7 days of 1-minute steps, at most a day (1440 steps) per call: 7 calls, in time order.
  ASSERT_EQ(prometheus_->range_calls.size(), 7u);
  const Clock::time_point end = gridTimeAtOrBefore(kNow - seconds(15), seconds(60));
  EXPECT_EQ(prometheus_->range_calls.back().end, end);
  EXPECT_EQ(prometheus_->range_calls.front().start, end - minutes(7 * 24 * 60 - 1));
  for (const auto& call : prometheus_->range_calls) {
    EXPECT_EQ(call.promql, "sum by (workload) (demand)");
    EXPECT_LE((call.end - call.start) / call.step + 1, 1440);
  }

  auto forecasts = service_.forecasts("demand_forecast");
  ASSERT_NE(forecasts, nullptr);
  EXPECT_EQ(forecasts->computed_at, end);
  ASSERT_EQ(forecasts->series.size(), 2u);
  EXPECT_EQ(forecasts->series[0].labels.at("workload"), "a");
  EXPECT_NEAR(forecasts->series[0].latest, demandAt(epochSeconds(end), 0), 1e-3);
  const RuleStatus status = service_.status("demand_forecast");
  EXPECT_TRUE(status.fetched);
  EXPECT_EQ(status.queries, 7u);
}

TEST_F(ForecastServiceTest, LaterRefreshesReadOnlyTheNewSteps) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  service_.refresh({waveRule()}, kNow);
  const Clock::time_point first_end = service_.forecasts("demand_forecast")->computed_at;

  service_.refresh({waveRule()}, kNow + seconds(30));  // not due yet: no call
  EXPECT_EQ(prometheus_->range_calls.size(), 7u);

  service_.refresh({waveRule()}, kNow + minutes(3));
  ASSERT_EQ(prometheus_->range_calls.size(), 8u);
  const auto& call = prometheus_->range_calls.back();
  // The new steps, and the last two known ones again in case their scrapes were late.
  EXPECT_EQ(call.start, first_end - minutes(2));
  EXPECT_EQ(call.end, first_end + minutes(3));
  EXPECT_EQ(service_.forecasts("demand_forecast")->computed_at, first_end + minutes(3));
}

// What a replica that refreshed all along serves equals what a replica started now serves.
TEST_F(ForecastServiceTest, IncrementalRefreshesEqualOneFullFetch) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  for (int minute = 0; minute <= 30; minute += 1) {
    service_.refresh({waveRule()}, kNow + minutes(minute));
  }
  ForecastService fresh(testing::onlyBackend(prometheus_), ForecastServiceOptions{});
  fresh.refresh({waveRule()}, kNow + minutes(30));

  auto incremental = service_.forecasts("demand_forecast");
  auto full = fresh.forecasts("demand_forecast");
  ASSERT_EQ(incremental->computed_at, full->computed_at);
  ASSERT_EQ(incremental->series.size(), full->series.size());
  for (std::size_t i = 0; i < full->series.size(); ++i) {
    EXPECT_EQ(incremental->series[i].labels, full->series[i].labels);
    EXPECT_EQ(incremental->series[i].forecast.values, full->series[i].forecast.values);
    EXPECT_EQ(incremental->series[i].forecast.maximum, full->series[i].forecast.maximum);
  }
  const auto history = service_.history("demand_forecast");
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->history.length, 7u * 24 * 60);
  for (const GridSeries& series : history->history.series) {
    EXPECT_EQ(series.values.size(), history->history.length);
  }
}

// The noise-free maximum of a workload's demand over [from, to], on the minute grid.
double waveMaxOver(Clock::time_point from, Clock::time_point to, double phase) {
  double result = -1e300;
  for (auto t = from; t <= to; t += minutes(1)) {
    result = std::max(result, demandAt(epochSeconds(t), phase));
  }
  return result;
}

// Whatever the phase of a read within the refresh interval, the served window is [now, now +
// horizon] on the step grid (not [last step read, + horizon], which is 15 s to 2 minutes old),
// and the value is the demand's maximum over it. At kNow workload b is rising (a window anchored
// at the last step read would serve too little) and a falling (too much).
TEST_F(ForecastServiceTest, TheServedWindowStartsAtTheRead) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  const config::ForecastRule rule = waveRule();
  std::size_t reads_after_the_last_step = 0;
  for (int refresh = 0; refresh < 3; ++refresh) {
    const Clock::time_point refreshed_at = kNow + minutes(refresh);
    service_.refresh({rule}, refreshed_at);
    const auto forecasts = service_.forecasts(rule.name);
    ASSERT_NE(forecasts, nullptr);
    for (const seconds after : {seconds(0), seconds(20), seconds(45), seconds(59)}) {
      const Clock::time_point now = refreshed_at + after;
      const ServedWindow window = servedWindow(*forecasts, now);
      EXPECT_EQ(window.start, gridTimeAtOrBefore(now, rule.step));
      EXPECT_EQ(window.end, window.start + rule.horizon);
      EXPECT_GE(window.end, now + rule.horizon - rule.step);
      reads_after_the_last_step += window.start > forecasts->computed_at ? 1 : 0;
      for (const SeriesForecast& series : forecasts->series) {
        const double phase = series.labels.at("workload") == "a" ? 0 : 0.25;
        // Raised to the latest value read only when the window starts at its step.
        const double wave = waveMaxOver(window.start, window.end, phase);
        EXPECT_NEAR(servedValue(series, window),
                    window.start == forecasts->computed_at ? std::max(series.latest, wave) : wave,
                    0.02)
            << "read " << after.count() << " s after refresh " << refresh << ", "
            << series.labels.at("workload") << " by " << methodTitle(series.forecast.method);
      }
    }
  }
  // Most reads come after the last step read: those are the ones the old window got wrong.
  EXPECT_GE(reads_after_the_last_step, 6u);
}

// A start pays at most first_selections_per_refresh selections; the other series serve the
// latest value at once (no 503 once the history is read) and are selected at their own minute,
// where they choose what a replica that selected them at once chose.
TEST_F(ForecastServiceTest, FirstSelectionsBeyondTheBudgetWaitForTheirMinute) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  ForecastService budgeted(testing::onlyBackend(prometheus_),
                           ForecastServiceOptions{.first_selections_per_refresh = 1});
  const config::ForecastRule rule = waveRule();
  budgeted.refresh({rule}, kNow);
  auto forecasts = budgeted.forecasts(rule.name);
  ASSERT_NE(forecasts, nullptr);
  ASSERT_EQ(forecasts->series.size(), 2u);
  const auto pending = [](const SeriesForecast& series) {
    return series.forecast.why.starts_with("selection pending");
  };
  ASSERT_EQ(std::count_if(forecasts->series.begin(), forecasts->series.end(), pending), 1);
  for (const SeriesForecast& series : forecasts->series) {
    if (!pending(series)) continue;
    EXPECT_EQ(series.forecast.method, Method::kLatestValue);
    EXPECT_EQ(servedValue(series, servedWindow(*forecasts, kNow + seconds(30))), series.latest);
  }

  Clock::time_point now = kNow;
  for (int minute = 1; minute <= 60; ++minute) {
    now = kNow + minutes(minute);
    budgeted.refresh({rule}, now);
  }
  forecasts = budgeted.forecasts(rule.name);
  EXPECT_EQ(std::count_if(forecasts->series.begin(), forecasts->series.end(), pending), 0);
  service_.refresh({rule}, now);
  const auto at_once = service_.forecasts(rule.name);
  ASSERT_EQ(at_once->series.size(), forecasts->series.size());
  for (std::size_t i = 0; i < at_once->series.size(); ++i) {
    EXPECT_EQ(forecasts->series[i].forecast.method, at_once->series[i].forecast.method);
    EXPECT_EQ(forecasts->series[i].forecast.windows, at_once->series[i].forecast.windows);
  }
}

TEST_F(ForecastServiceTest, AnEndedSeriesIsNoLongerServed) {
  prometheus_->range_answer =
      WaveServer{.first_data = kNow - hours(24 * 8), .b_ends = kNow - minutes(20)};
  service_.refresh({waveRule()}, kNow);
  auto forecasts = service_.forecasts("demand_forecast");
  ASSERT_EQ(forecasts->series.size(), 1u);
  EXPECT_EQ(forecasts->series[0].labels.at("workload"), "a");
}

TEST_F(ForecastServiceTest, ACoarseSeriesIsServedBetweenItsSamples) {
  // A sample every 30 minutes, which a range query shows for Prometheus' 5-minute lookback and
  // then not until the next one.
  constexpr double kSpacing = 1800;
  prometheus_->range_answer = [](const testing::FakePrometheus::RangeCall& call) {
    prometheus::RangeSeries series;
    series.labels = {{"workload", "batch"}};
    for (auto t = call.start; t <= call.end; t += call.step) {
      const double at = epochSeconds(t);
      const double sample = at - std::fmod(at, kSpacing);
      if (at - sample >= 300) continue;
      series.times.push_back(at);
      series.values.push_back(demandAt(sample, 0));
    }
    prometheus::RangeResult result;
    result.series.push_back(std::move(series));
    return result;
  };
  // Two minutes after a sample, then every minute over the next samples' spacing.
  const double first = epochSeconds(kNow) - std::fmod(epochSeconds(kNow), kSpacing) + 120 + 15;
  const Clock::time_point start{seconds(static_cast<std::int64_t>(first))};
  std::size_t due_inside = 0;
  for (int minute = 0; minute <= 35; ++minute) {
    service_.refresh({waveRule()}, start + minutes(minute));
    const auto forecasts = service_.forecasts("demand_forecast");
    ASSERT_EQ(forecasts->series.size(), 1u) << minute;
    const Forecast& forecast = forecasts->series[0].forecast;
    EXPECT_TRUE(forecast.on_samples) << minute << ": " << forecast.why;
    ASSERT_TRUE(forecast.next_sample_due.has_value()) << minute;
    due_inside += *forecast.next_sample_due <= 10 ? 1 : 0;
  }
  // The 10-minute window holds the next sample's due time when the last step read is 20 to 29
  // minutes after a sample (at 30 the step read holds the next one).
  EXPECT_EQ(due_inside, 10u);
}

TEST_F(ForecastServiceTest, FailuresKeepTheLastForecastAndAreRetried) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  service_.refresh({waveRule()}, kNow);
  const auto before = service_.forecasts("demand_forecast");

  prometheus_->range_answer =
      [](const testing::FakePrometheus::RangeCall&) -> prometheus::RangeResult {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                      "connection refused");
  };
  service_.refresh({waveRule()}, kNow + minutes(2));
  RuleStatus status = service_.status("demand_forecast");
  EXPECT_EQ(status.last_error, "backend \"default\": connection refused");
  EXPECT_EQ(status.last_success, kNow);
  EXPECT_EQ(service_.forecasts("demand_forecast"), before);

  // Retried 10 s later, not a whole refresh interval.
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  service_.refresh({waveRule()}, kNow + minutes(2) + seconds(10));
  status = service_.status("demand_forecast");
  EXPECT_TRUE(status.last_error.empty());
  EXPECT_NE(service_.forecasts("demand_forecast"), before);
}

TEST_F(ForecastServiceTest, FirstFetchFailureLeavesNothingToServe) {
  prometheus_->range_answer =
      [](const testing::FakePrometheus::RangeCall&) -> prometheus::RangeResult {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kTimeout, 0, "timeout");
  };
  service_.refresh({waveRule()}, kNow);
  const RuleStatus status = service_.status("demand_forecast");
  EXPECT_TRUE(status.known);
  EXPECT_FALSE(status.fetched);
  EXPECT_EQ(status.last_error, "backend \"default\": timeout");
  EXPECT_EQ(service_.forecasts("demand_forecast"), nullptr);
  EXPECT_FALSE(service_.history("demand_forecast").has_value());
}

TEST_F(ForecastServiceTest, AChangedRuleStartsOverAndARemovedOneIsGone) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  service_.refresh({waveRule()}, kNow);
  ASSERT_EQ(prometheus_->range_calls.size(), 7u);

  config::ForecastRule changed = waveRule();
  changed.horizon = minutes(20);
  service_.refresh({changed}, kNow + seconds(5));  // not due for the old rule, but a new one
  EXPECT_EQ(prometheus_->range_calls.size(), 14u);

  service_.refresh({}, kNow + minutes(5));
  EXPECT_FALSE(service_.status("demand_forecast").known);
  EXPECT_EQ(service_.forecasts("demand_forecast"), nullptr);
}

TEST(GridTimeTest, IsAMultipleOfTheStepAtOrBeforeNow) {
  const Clock::time_point now = Clock::time_point(seconds(1'000'000'059));
  EXPECT_EQ(gridTimeAtOrBefore(now, seconds(60)), Clock::time_point(seconds(1'000'000'020)));
  EXPECT_EQ(gridTimeAtOrBefore(now, seconds(1)), now);
  EXPECT_EQ(gridTimeAtOrBefore(Clock::time_point(seconds(120)), seconds(60)),
            Clock::time_point(seconds(120)));
}

// A rule reads its history from the backend it names; a name the set lacks fails that rule only.
TEST(ForecastServiceBackendTest, EachRuleReadsTheBackendItNames) {
  auto fallback = std::make_shared<testing::FakePrometheus>();
  auto thanos = std::make_shared<testing::FakePrometheus>();
  thanos->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  auto default_backend = std::make_shared<prometheus::Backend>(testing::asBackend(fallback));
  auto thanos_backend = std::make_shared<prometheus::Backend>(testing::asBackend(thanos));
  thanos_backend->name = "thanos";
  auto backends = std::make_shared<const prometheus::BackendSet>(
      std::vector<std::shared_ptr<const prometheus::Backend>>{default_backend, thanos_backend});
  ForecastService service([backends] { return backends; }, ForecastServiceOptions{});

  config::ForecastRule on_thanos = waveRule();
  on_thanos.backend = "thanos";
  config::ForecastRule nowhere = waveRule();
  nowhere.name = "orphan_forecast";
  nowhere.backend = "mimir";
  service.refresh({on_thanos, nowhere}, kNow);

  EXPECT_FALSE(thanos->range_calls.empty());
  EXPECT_TRUE(fallback->range_calls.empty());
  EXPECT_TRUE(service.forecasts("demand_forecast"));
  EXPECT_FALSE(service.forecasts("orphan_forecast"));
  EXPECT_EQ(service.status("orphan_forecast").last_error, "backend \"mimir\": not configured");
}

// The fresh read: one instant query per rule per evaluation time, whatever the number of reads.
// A series served by the latest value serves exactly what the query answers, and a read after a
// new scrape (the next evaluation time) sees it; a read too old is not used.
TEST_F(ForecastServiceTest, FreshReadsServeTheNewestSample) {
  // One day of history: both workloads are served their latest value.
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24)};
  const config::ForecastRule rule = waveRule();
  service_.refresh({rule}, kNow);
  double a_now = 123.5;
  prometheus_->answer = [&a_now](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {testing::sample({{"workload", "a"}}, a_now),
                      testing::sample({{"workload", "b"}}, 7)};
    return result;
  };
  const Clock::time_point read = kNow + seconds(2);
  service_.readFresh(read);
  service_.readFresh(read + std::chrono::milliseconds(250));  // the same evaluation time
  EXPECT_EQ(prometheus_->queries, std::vector<std::string>{rule.query});
  const auto forecasts = service_.forecasts(rule.name);
  auto fresh = service_.fresh(rule.name);
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh->read_at, freshReadTime(read));
  EXPECT_LE(read - fresh->read_at, kFreshInterval + kFreshSettle);
  const auto served = [&](Clock::time_point at) {
    std::map<std::string, double> values;
    const std::shared_ptr<const FreshValues> last = service_.fresh(rule.name);
    for (const SeriesForecast& series : forecasts->series) {
      EXPECT_EQ(series.forecast.method, Method::kLatestValue);
      values[series.labels.at("workload")] = servedValue(series, servedWindow(*forecasts, at),
                                                         freshValue(last.get(), series.labels, at));
    }
    return values;
  };
  EXPECT_EQ(served(read), (std::map<std::string, double>{{"a", 123.5}, {"b", 7}}));

  a_now = 200;  // a new scrape
  const Clock::time_point later = read + kFreshInterval;
  service_.readFresh(later);
  EXPECT_EQ(prometheus_->queries.size(), 2u);
  EXPECT_EQ(served(later).at("a"), 200);
  EXPECT_EQ(service_.status(rule.name).fresh_queries, 2u);

  // Past kFreshMaxAge without a successful read, the history's last step serves again.
  prometheus_->answer = [](const std::string&) -> prometheus::QueryResult {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0, "down");
  };
  const Clock::time_point stale = later + kFreshMaxAge + kFreshInterval;
  service_.readFresh(stale);
  EXPECT_NE(service_.status(rule.name).fresh_error, "");
  for (const SeriesForecast& series : forecasts->series) {
    EXPECT_EQ(served(stale).at(series.labels.at("workload")), series.latest);
  }
}

// With no first selection in the refresh (the server), every series is pending and serves its
// latest value; the worker then selects them all, choosing and serving what a refresh that
// selected them at once did.
TEST_F(ForecastServiceTest, TheWorkerMakesTheFirstSelectionsTheRefreshWouldHaveMade) {
  prometheus_->range_answer = WaveServer{.first_data = kNow - hours(24 * 8)};
  const config::ForecastRule rule = waveRule();
  ForecastService server(testing::onlyBackend(prometheus_),
                         ForecastServiceOptions{.first_selections_per_refresh = 0});
  EXPECT_FALSE(server.selectionProgress().done());  // nothing fetched yet
  server.refresh({rule}, kNow);
  SelectionProgress progress = server.selectionProgress();
  EXPECT_EQ(progress.rules_refreshed, 1u);
  EXPECT_EQ(progress.series, 2u);
  EXPECT_EQ(progress.pending, 2u);
  EXPECT_FALSE(progress.done());
  for (const SeriesForecast& series : server.forecasts(rule.name)->series) {
    EXPECT_TRUE(series.pending);
    EXPECT_TRUE(series.forecast.why.starts_with("selection pending"));
  }

  EXPECT_EQ(server.selectPending(std::chrono::nanoseconds(0)), 2u);  // no budget: none made
  EXPECT_EQ(server.selectPending(hours(1)), 0u);
  EXPECT_TRUE(server.selectionProgress().done());

  service_.refresh({rule}, kNow);
  const auto at_once = service_.forecasts(rule.name);
  const auto selected = server.forecasts(rule.name);
  ASSERT_EQ(selected->series.size(), at_once->series.size());
  for (std::size_t i = 0; i < at_once->series.size(); ++i) {
    EXPECT_FALSE(selected->series[i].pending);
    EXPECT_EQ(selected->series[i].forecast.method, at_once->series[i].forecast.method);
    EXPECT_EQ(selected->series[i].forecast.windows, at_once->series[i].forecast.windows);
  }
  // The next refresh keeps the selections.
  server.refresh({rule}, kNow + minutes(1));
  EXPECT_EQ(server.selectionProgress().pending, 0u);
}

}  // namespace
}  // namespace metrics_adapter::forecast
