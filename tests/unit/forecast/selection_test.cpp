#include "metrics_adapter/forecast/selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "metrics_adapter/forecast/forecast_service.h"
#include "metrics_adapter/forecast/replay.h"
#include "unit/forecast/synthetic_load.h"

// The method selection on series shaped like the failures seen on real demand (issue 28): coarse
// samples, gaps, a weekend, an abnormal day, a weak rhythm. Each case checks what was chosen and
// that nothing below the latest value is served.
namespace metrics_adapter::forecast {
namespace {

using synthetic::kMinutesPerDay;
using synthetic::LoadShape;

constexpr std::chrono::seconds kStep{60};
constexpr int kHorizon = 10;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

double latestOf(std::span<const float> values) {
  for (auto it = values.rbegin(); it != values.rend(); ++it) {
    if (std::isfinite(*it)) return *it;
  }
  return std::nan("");
}

// A scrape every `spacing` minutes read on the 1-minute grid with Prometheus' 5-minute
// lookback: each sample repeats until the next one, for at most 5 steps.
std::vector<float> sampledEvery(const std::vector<float>& minutes, std::size_t spacing) {
  std::vector<float> grid(minutes.size(), kNaN);
  for (std::size_t i = 0; i < minutes.size(); ++i) {
    const std::size_t sample = i - i % spacing;
    if (i - sample < std::min<std::size_t>(spacing, 5)) grid[i] = minutes[sample];
  }
  return grid;
}

const MethodScore* scoreOf(const Selection& selection, Method method) {
  for (const MethodScore& score : selection.scores) {
    if (score.method == method) return &score;
  }
  return nullptr;
}

// The rule of the selection, on the scores it reports: a method further from the latest value
// (a higher cautionRank) serves only when it beats every more cautious one by the margin (half
// of it against the latest value to stay), and none further from it beat what serves so.
void expectChosenByTheRule(const Selection& selection) {
  ASSERT_FALSE(selection.scores.empty()) << selection.why;
  const MethodScore* chosen = scoreOf(selection, selection.method);
  const MethodScore* latest = scoreOf(selection, Method::kLatestValue);
  ASSERT_NE(chosen, nullptr);
  ASSERT_NE(latest, nullptr);
  if (selection.method == Method::kSeasonal) return;  // scored on its own steps
  const int rank = cautionRank(selection.method);
  for (const MethodScore& score : selection.scores) {
    if (score.method == Method::kSeasonal || score.method == selection.method) continue;
    if (cautionRank(score.method) > rank) {
      EXPECT_GE(score.mape * (1 + kSelectionHysteresis), chosen->mape * (1 - kSelectionMargin))
          << methodKey(score.method) << ": " << selection.why;
    } else {
      EXPECT_LE(chosen->mape, score.mape * (1 + kSelectionHysteresis) + 1e-12)
          << methodKey(score.method) << ": " << selection.why;
    }
  }
  if (selection.method != Method::kLatestValue) {
    EXPECT_LE(chosen->mape, latest->mape * (1 - kSelectionMargin / 2)) << selection.why;
  }
}

// Selects and forecasts at the series' end; checks the floor at the latest value.
Forecast selectAndForecast(const std::vector<float>& series, Selection& selection) {
  selection = selectMethod(series, kStep, kHorizon, {});
  const Forecast forecast = forecastWith(selection, series, kStep, kHorizon, {});
  EXPECT_GE(forecast.maximum, latestOf(series)) << forecast.why;
  EXPECT_EQ(forecast.method, selection.method);
  return forecast;
}

LoadShape dailyShape(double noise, std::uint64_t seed) {
  LoadShape shape;
  shape.noise = noise;
  shape.seed = seed;
  return shape;
}

TEST(MethodSelectionTest, AClearDailyRhythmIsServedByASeasonalMethod) {
  // Ends at 07:00 on day 7, on the morning ramp.
  const auto series = synthetic::generateLoad(dailyShape(0.03, 3), 7 * kMinutesPerDay + 7 * 60);
  Selection selection;
  const Forecast forecast = selectAndForecast(series, selection);
  expectChosenByTheRule(selection);
  EXPECT_NE(selection.method, Method::kLatestValue) << selection.why;
  // On the ramp the served value is above the latest one: it leads.
  EXPECT_GT(forecast.maximum, latestOf(series) * 1.02) << forecast.why;
  EXPECT_EQ(selection.sampling.spacing_steps, 1u);
  const MethodScore* latest = scoreOf(selection, Method::kLatestValue);
  ASSERT_NE(latest, nullptr);
  EXPECT_LT(scoreOf(selection, selection.method)->mape, latest->mape);
}

TEST(MethodSelectionTest, FiveMinuteSamplesAreReadAsSuch) {
  const auto minutes = synthetic::generateLoad(dailyShape(0.05, 4), 7 * kMinutesPerDay + 8 * 60);
  const auto series = sampledEvery(minutes, 5);
  Selection selection;
  const Forecast forecast = selectAndForecast(series, selection);
  EXPECT_EQ(selection.sampling.spacing_steps, 5u);
  EXPECT_NEAR(selection.sampling.coverage, 1.0, 1e-9);
  expectChosenByTheRule(selection);
  EXPECT_NE(forecast.why.find("MAPE"), std::string::npos) << forecast.why;
}

TEST(MethodSelectionTest, ThirtyMinuteSamplesServeTheLatestValueAndSayWhy) {
  const auto minutes = synthetic::generateLoad(dailyShape(0.05, 5), 7 * kMinutesPerDay);
  const auto series = sampledEvery(minutes, 30);
  Selection selection;
  const Forecast forecast = selectAndForecast(series, selection);
  EXPECT_EQ(selection.sampling.spacing_steps, 30u);
  EXPECT_NEAR(selection.sampling.coverage, 5.0 / 30, 0.01);
  EXPECT_EQ(selection.method, Method::kLatestValue);
  EXPECT_NE(forecast.why.find("no new value is due within the horizon"), std::string::npos)
      << forecast.why;
  EXPECT_NE(forecast.why.find("every 30 steps (30m)"), std::string::npos) << forecast.why;
  EXPECT_EQ(forecast.maximum, latestOf(series));
}

TEST(MethodSelectionTest, GapsDoNotStopTheSelection) {
  LoadShape shape = dailyShape(0.04, 6);
  for (std::size_t day = 0; day < 7; ++day) shape.gaps.push_back({day * kMinutesPerDay + 120, 180});
  const auto series = synthetic::generateLoad(shape, 7 * kMinutesPerDay + 7 * 60);
  Selection selection;
  selectAndForecast(series, selection);
  expectChosenByTheRule(selection);
  EXPECT_NE(selection.method, Method::kLatestValue) << selection.why;
  EXPECT_LT(selection.sampling.coverage, 0.9);
}

TEST(MethodSelectionTest, TheWeeklyCandidateNeedsEightDays) {
  LoadShape shape = dailyShape(0.03, 7);
  shape.weekend_amplitude = 0.3;
  shape.first_weekday = 5;  // day 0 a Saturday: the last day of 9 (day 8) is a Sunday
  const auto nine_days = synthetic::generateLoad(shape, 8 * kMinutesPerDay + 11 * 60);
  Selection selection;
  selectAndForecast(nine_days, selection);
  EXPECT_NE(scoreOf(selection, Method::kSeasonalNaiveWeek), nullptr);
  expectChosenByTheRule(selection);
  // One day earlier was a Saturday, like today; the weekday profile would have overshot.
  EXPECT_NE(selection.method, Method::kLatestValue) << selection.why;

  const std::vector<float> seven_days(nine_days.end() - 7 * kMinutesPerDay, nine_days.end());
  selectAndForecast(seven_days, selection);
  EXPECT_EQ(scoreOf(selection, Method::kSeasonalNaiveWeek), nullptr);
}

TEST(MethodSelectionTest, AnAbnormalYesterdayIsNotReplayed) {
  LoadShape shape = dailyShape(0.03, 8);
  shape.anomaly_day = 5;  // the day before the scored day
  shape.anomaly_factor = 2.5;
  const auto series = synthetic::generateLoad(shape, 7 * kMinutesPerDay + 9 * 60);
  Selection selection;
  selectAndForecast(series, selection);
  expectChosenByTheRule(selection);
  EXPECT_NE(selection.method, Method::kSeasonalNaiveDay) << selection.why;
  const MethodScore* naive = scoreOf(selection, Method::kSeasonalNaiveDay);
  ASSERT_NE(naive, nullptr);
  EXPECT_GT(naive->mape, scoreOf(selection, selection.method)->mape * 2) << selection.why;
}

TEST(MethodSelectionTest, AWeakRhythmThatHelpsIsUsed) {
  // A rhythm of 15 % buried in 35 % noise: the autocorrelation is weak, yet a day ago still
  // says more about the next ten minutes than the latest noisy value does.
  LoadShape shape = dailyShape(0.35, 9);
  shape.night = 340;
  shape.peak = 400;
  const auto series = synthetic::generateLoad(shape, 7 * kMinutesPerDay + 12 * 60);
  Selection selection;
  selectAndForecast(series, selection);
  expectChosenByTheRule(selection);
  EXPECT_NE(selection.method, Method::kLatestValue) << selection.why;
}

TEST(MethodSelectionTest, ACombinationServesTheLowerOrTheMeanOfTwoMethods) {
  // On the morning ramp: seasonal naive (1d) and Holt-Winters both expect a rise, by different
  // amounts.
  const auto series = synthetic::generateLoad(dailyShape(0.08, 16), 7 * kMinutesPerDay + 7 * 60);
  const double latest = latestOf(series);
  Selection selection = selectMethod(series, kStep, kHorizon, {});
  const auto highest = [latest](const std::vector<double>& values) {
    double result = latest;
    for (const double v : values) result = std::max(result, v);
    return result;
  };
  const double day = highest(seasonalNaive(series, kStep, std::chrono::hours(24), kHorizon));
  const double holt_winters = highest(
      holtWintersWith(series, kStep, std::chrono::hours(24), kHorizon, selection.holt_winters));
  ASSERT_GT(std::min(day, holt_winters), latest * 1.01);  // both above the latest value
  for (const Method method : {Method::kCombinedLow, Method::kCombinedMean}) {
    selection.method = method;
    const Forecast forecast = forecastWith(selection, series, kStep, kHorizon, {});
    const double expected =
        method == Method::kCombinedLow ? std::min(day, holt_winters) : (day + holt_winters) / 2;
    EXPECT_NEAR(forecast.maximum, expected, 1e-9 * expected) << methodKey(method);
    EXPECT_EQ(forecast.values.back(), forecast.maximum);  // the highest expected by then
    EXPECT_TRUE(std::is_sorted(forecast.values.begin(), forecast.values.end()));
  }
}

TEST(MethodSelectionTest, NoiseOnARhythmIsServedByACombination) {
  // Noisy demand (request counts, social volume): the maximum over the next ten minutes is
  // usually above the latest value, by about what a day ago's maximum over the same minutes was;
  // Holt-Winters' smooth curve expects less. Where both expect a rise it comes: the lower of the
  // two beats each alone and the latest value.
  for (const double noise : {0.15, 0.25}) {
    const auto series = synthetic::generateLoad(dailyShape(noise, 17), 7 * kMinutesPerDay + 8 * 60);
    Selection selection;
    selectAndForecast(series, selection);
    expectChosenByTheRule(selection);
    EXPECT_EQ(cautionRank(selection.method), 1) << noise << ": " << selection.why;
  }
}

TEST(MethodSelectionTest, NoRhythmServesTheLatestValueOrBetter) {
  // A random walk: nothing repeats, and the latest value is the best simple forecast.
  std::vector<float> walk(7 * kMinutesPerDay);
  double level = 200;
  for (std::size_t i = 0; i < walk.size(); ++i) {
    level = std::max(1.0, level + 4 * synthetic::gaussian(10, i));
    walk[i] = static_cast<float>(level);
  }
  Selection selection;
  selectAndForecast(walk, selection);
  expectChosenByTheRule(selection);
  const MethodScore* latest = scoreOf(selection, Method::kLatestValue);
  ASSERT_NE(latest, nullptr);
  EXPECT_LE(scoreOf(selection, selection.method)->mape, latest->mape + 1e-12);
}

TEST(MethodSelectionTest, ADeclineIsNeverServedBelowTheLatestValue) {
  // Ends at 21:00, in the evening decline: every seasonal method forecasts less than now.
  const auto series = synthetic::generateLoad(dailyShape(0.0, 11), 7 * kMinutesPerDay + 21 * 60);
  Selection selection;
  const Forecast forecast = selectAndForecast(series, selection);
  EXPECT_EQ(forecast.maximum, latestOf(series)) << forecast.why;
  EXPECT_EQ(forecast.values.front(), latestOf(series));
}

TEST(MethodSelectionTest, TooLittleHistoryServesTheLatestValue) {
  const auto series = synthetic::generateLoad(dailyShape(0.03, 12), kMinutesPerDay + 600);
  Selection selection;
  const Forecast forecast = selectAndForecast(series, selection);
  EXPECT_EQ(selection.method, Method::kLatestValue);
  EXPECT_TRUE(selection.scores.empty());
  EXPECT_NE(forecast.why.find("only 1.4 days of history"), std::string::npos) << forecast.why;
}

TEST(MethodSelectionTest, AHorizonAsLongAsTheHistoryServesTheLatestValue) {
  const auto series = synthetic::generateLoad(dailyShape(0.03, 15), 2 * kMinutesPerDay + 60);
  const Selection selection =
      selectMethod(series, kStep, static_cast<int>(series.size()), {});  // not from a config
  EXPECT_EQ(selection.method, Method::kLatestValue);
  EXPECT_NE(selection.why.find("as long as the history"), std::string::npos) << selection.why;
}

TEST(SelectingForecasterTest, ReplicasStartedAtDifferentTimesAgree) {
  const auto series = synthetic::generateLoad(dailyShape(0.05, 13), 8 * kMinutesPerDay);
  const std::size_t window = 7 * kMinutesPerDay;
  const std::map<std::string, std::string> labels{{"pod", "a"}};
  const std::int64_t origin = 29'000'000;  // grid steps since the epoch of index 0
  const auto at = [&](std::size_t end) {   // the window of the rule's history ending at `end`
    return std::span(series).subspan(end + 1 - window, window);
  };
  SelectingForecaster early(kStep, kHorizon, {}, labels);
  for (std::size_t end = window + 100; end < window + 200; ++end) {
    early.forecast(at(end), origin + static_cast<std::int64_t>(end));
  }
  for (std::size_t end = window + 200; end < window + 300; end += 7) {
    SelectingForecaster late(kStep, kHorizon, {}, labels);
    const Forecast a = early.forecast(at(end), origin + static_cast<std::int64_t>(end));
    const Forecast b = late.forecast(at(end), origin + static_cast<std::int64_t>(end));
    EXPECT_EQ(a.values, b.values) << end;
    EXPECT_EQ(a.method, b.method);
    EXPECT_EQ(a.why, b.why);
  }
}

TEST(ReplaySelectionTest, NeverWorseThanTheBestSimpleMethodOnARhythm) {
  LoadShape shape = dailyShape(0.05, 14);
  const auto series = synthetic::generateLoad(shape, 8 * kMinutesPerDay);
  GridHistory history;
  history.start = Clock::time_point(std::chrono::hours(24 * 20000));
  history.length = series.size();
  history.series.push_back(GridSeries{.labels = {{"pod", "a"}}, .values = series});
  config::ForecastRule rule;
  rule.name = "demand";
  const ObserverPageData page = replayHistory(rule, history, kMinutesPerDay / 2, 300.0, {});
  ASSERT_EQ(page.series.size(), 1u);
  const ObservedSeries& replayed = page.series[0];
  ASSERT_EQ(replayed.baselines.size(), 4u);
  for (const BaselineReplay& baseline : replayed.baselines) {
    EXPECT_EQ(baseline.replay.points.size(), replayed.replay.points.size());
    EXPECT_LE(replayed.replay.mape, baseline.replay.mape) << methodKey(baseline.method);
  }
  // The replay serves with the service's lag (15 s read delay + 1 m refresh, on a 1 m grid): no
  // step before it is replayed. (It used to check the floor at the latest value, which applies
  // only to a window that starts at the latest value's step, never the case with a lag.)
  ASSERT_EQ(servingLagSteps(rule), 2u);
  ASSERT_FALSE(replayed.replay.points.empty());
  EXPECT_GE(replayed.replay.points.front().index, servingLagSteps(rule));
}

}  // namespace
}  // namespace metrics_adapter::forecast
