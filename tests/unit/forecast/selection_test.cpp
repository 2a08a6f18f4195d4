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
// lookback (or another `lookback`): each sample repeats until the next one, for at most
// `lookback` steps.
std::vector<float> sampledEvery(const std::vector<float>& minutes, std::size_t spacing,
                                std::size_t lookback = 5) {
  std::vector<float> grid(minutes.size(), kNaN);
  for (std::size_t i = 0; i < minutes.size(); ++i) {
    const std::size_t sample = i - i % spacing;
    if (i - sample < std::min(spacing, lookback)) grid[i] = minutes[sample];
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
  EXPECT_EQ(servedValueRule(forecast), "max over the horizon, never below the latest");
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

// A 30-minute scrape of a daily rhythm, read on the 1-minute grid with a 10-minute horizon: a
// new sample is due inside the window [end, end + horizon] when the history ends 20 or more
// minutes after the latest sample.
constexpr std::size_t kCoarse = 30;
constexpr std::size_t kWeek = 7 * kMinutesPerDay;

struct CoarseSeries {
  std::vector<float> minutes;  // the demand, every minute
  std::vector<float> grid;     // what the rule reads: a sample every kCoarse minutes

  explicit CoarseSeries(std::size_t days)
      : minutes(synthetic::generateLoad(dailyShape(0.05, 5), days * kMinutesPerDay)),
        grid(sampledEvery(minutes, kCoarse)) {}

  // The rule's history (a week) ending at `end`.
  std::span<const float> historyTo(std::size_t end) const {
    return std::span(grid).subspan(end + 1 - kWeek, kWeek);
  }

  // What `selection`'s method serves over the latest sample and the next, from the series' own
  // samples up to `end` (every kCoarse-th minute of its week), without the grid.
  double servedOnSamples(const Selection& selection, std::size_t end) const {
    std::vector<float> samples;
    for (std::size_t i = end + 1 - kWeek; i <= end; ++i) {
      if (i % kCoarse == 0) samples.push_back(minutes[i]);
    }
    Selection on_samples = selection;
    on_samples.on_samples = false;
    on_samples.sampling = analyseSampling(samples);
    return forecastWith(on_samples, samples, kStep * static_cast<int>(kCoarse), 1, {}).maximum;
  }

  // The target: the actual maximum over [from, from + horizon] on the grid.
  double actualMax(std::size_t from) const {
    double result = -std::numeric_limits<double>::infinity();
    for (std::size_t i = from; i <= from + kHorizon; ++i) {
      if (std::isfinite(grid[i])) result = std::max<double>(result, grid[i]);
    }
    return result;
  }
};

TEST(CoarseSeriesTest, TheSampleDueInsideTheWindowIsForecastAndBeatsTheLatestValue) {
  const CoarseSeries series(10);
  // Every history of the last two days that ends 25 minutes after a sample: the next one is due
  // in 5 minutes.
  double served_error = 0;
  double latest_error = 0;
  std::size_t forecast_differs = 0;
  for (std::size_t end = 8 * kMinutesPerDay + 25; end + kHorizon < series.grid.size();
       end += kCoarse) {
    const std::span<const float> history = series.historyTo(end);
    const Selection selection = selectMethod(history, kStep, kHorizon, {});
    ASSERT_TRUE(selection.on_samples) << selection.why;
    const Forecast forecast = forecastWith(selection, history, kStep, kHorizon, {});
    ASSERT_EQ(forecast.next_sample_due, 5);
    const double latest = latestOf(history);
    EXPECT_EQ(forecast.maximum, series.servedOnSamples(selection, end)) << end;
    EXPECT_GE(forecast.maximum, latest);
    forecast_differs += forecast.maximum != latest ? 1 : 0;
    const double actual = series.actualMax(end);
    served_error += std::abs(forecast.maximum - actual) / actual;
    latest_error += std::abs(latest - actual) / actual;
  }
  EXPECT_GT(forecast_differs, 0u);
  EXPECT_LT(served_error, latest_error * (1 - kSelectionMargin));
}

TEST(CoarseSeriesTest, TheSelectionScoresOneValuePerSample) {
  const CoarseSeries series(8);
  const std::size_t end = series.grid.size() - 1;
  const Selection selection = selectMethod(series.historyTo(end), kStep, kHorizon, {});
  EXPECT_EQ(selection.sampling.spacing_steps, kCoarse);
  EXPECT_NEAR(selection.sampling.coverage, 5.0 / kCoarse, 0.01);
  EXPECT_TRUE(selection.on_samples);
  const MethodScore* latest = scoreOf(selection, Method::kLatestValue);
  ASSERT_NE(latest, nullptr) << selection.why;
  // The 2-day window holds 96 samples (and 2,880 grid steps, 480 of them with a value).
  const auto samples = static_cast<std::size_t>(kSelectionWindow / std::chrono::minutes(kCoarse));
  EXPECT_LE(latest->points, samples);
  EXPECT_GT(latest->points, samples / 2);
  EXPECT_TRUE(selection.why.starts_with(samplingText(selection.sampling, kStep.count()) +
                                        ", so chosen on its own samples"))
      << selection.why;
}

TEST(CoarseSeriesTest, NoSampleDueServesTheLatestValueAndSaysWhen) {
  const CoarseSeries series(8);
  const std::size_t end = 7 * kMinutesPerDay + 7 * 60 + 5;  // 07:05, on the ramp
  const std::span<const float> history = series.historyTo(end);
  const Selection selection = selectMethod(history, kStep, kHorizon, {});
  const Forecast forecast = forecastWith(selection, history, kStep, kHorizon, {}, 3);
  const double latest = latestOf(history);
  EXPECT_EQ(forecast.maximum, latest);
  for (const double window : forecast.windows) EXPECT_EQ(window, latest);
  EXPECT_EQ(nextSampleText(forecast, kStep, kHorizon, 0),
            "next sample due in 25m, after the 10m window: serving the latest value");
  EXPECT_EQ(servedSamplingText(forecast, kStep, kHorizon, 2),
            samplingText(selection.sampling, kStep.count()) +
                "; next sample due in 23m, after the 10m window: serving the latest value");
  // explain's rule for the served value: not "never below the latest", which a later window's
  // forecast of a due sample may be.
  EXPECT_EQ(servedValueRule(forecast),
            "a sample due in the window: its forecast; else the value in force at the window's "
            "start");
}

TEST(CoarseSeriesTest, ASampleDueAtTheWindowsEndIsInsideItOneStepLaterIsNot) {
  const CoarseSeries series(8);
  const std::size_t sample = 7 * kMinutesPerDay + 7 * 60;  // 07:00, on the ramp
  const auto forecastAt = [&](std::size_t end, int lead) {
    const std::span<const float> history = series.historyTo(end);
    const Selection selection = selectMethod(history, kStep, kHorizon, {});
    return std::pair(forecastWith(selection, history, kStep, kHorizon, {}, lead),
                     series.servedOnSamples(selection, end));
  };
  // Due in 10 minutes: at the end of [end, end + 10m].
  const auto [at_end, served_at_end] = forecastAt(sample + kCoarse - kHorizon, 0);
  EXPECT_GT(served_at_end, latestOf(series.historyTo(sample)));  // the ramp is forecast
  EXPECT_EQ(at_end.maximum, served_at_end);
  EXPECT_EQ(nextSampleText(at_end, kStep, kHorizon, 0),
            "next sample due in 10m, inside the 10m window: forecast by " +
                std::string(methodTitle(at_end.method)));
  // Due in 11 minutes: one step after the window.
  const auto [after, served_after] = forecastAt(sample + kCoarse - kHorizon - 1, 0);
  EXPECT_EQ(after.maximum, latestOf(series.historyTo(sample)));
  EXPECT_NE(after.maximum, served_after);
  // Due in 12 minutes, windows read 0 to 3 steps after the history's end: the windows that
  // start 2 and 3 steps later hold the sample's due time.
  const auto [lead, served_lead] = forecastAt(sample + kCoarse - kHorizon - 2, 3);
  ASSERT_EQ(lead.windows.size(), 4u);
  const double latest = latestOf(series.historyTo(sample));
  EXPECT_EQ(lead.windows[0], latest);
  EXPECT_EQ(lead.windows[1], latest);
  EXPECT_EQ(lead.windows[2], served_lead);
  EXPECT_EQ(lead.windows[3], served_lead);
  EXPECT_EQ(nextSampleText(lead, kStep, kHorizon, 1),
            "next sample due in 11m, after the 10m window: serving the latest value");
  EXPECT_EQ(nextSampleText(lead, kStep, kHorizon, 3),
            "next sample due in 9m, inside the 10m window: forecast by " +
                std::string(methodTitle(lead.method)));
}

TEST(CoarseSeriesTest, ASampleNotSeenAtItsTimeKeepsTheSchedule) {
  // A query that holds each sample until the next (last_over_time over the spacing), and a
  // sample at 07:00 equal to the one before: the grid shows no new value then.
  CoarseSeries series(8);
  const std::size_t repeated = 7 * kMinutesPerDay + 7 * 60;
  series.minutes[repeated] = series.minutes[repeated - kCoarse];
  series.grid = sampledEvery(series.minutes, kCoarse, kCoarse);
  const std::size_t end = repeated + 25;  // 55 minutes after the last value that changed
  const std::span<const float> history = series.historyTo(end);
  const Selection selection = selectMethod(history, kStep, kHorizon, {});
  EXPECT_EQ(selection.sampling.spacing_steps, kCoarse);
  const Forecast forecast = forecastWith(selection, history, kStep, kHorizon, {});
  EXPECT_EQ(forecast.next_sample_due, 5);
  EXPECT_EQ(forecast.maximum, series.servedOnSamples(selection, end));
  EXPECT_EQ(nextSampleText(forecast, kStep, kHorizon, 0),
            "next sample due in 5m, inside the 10m window: forecast by " +
                std::string(methodTitle(forecast.method)));
  // Two minutes later on the lookback's grid, where a missed scrape leaves a gap: the next
  // sample is due a spacing after the one missed.
  series.grid = sampledEvery(series.minutes, kCoarse);
  for (std::size_t i = repeated; i < repeated + 5; ++i) series.grid[i] = kNaN;
  const std::span<const float> missed = series.historyTo(repeated + 2);
  const Forecast later =
      forecastWith(selectMethod(missed, kStep, kHorizon, {}), missed, kStep, kHorizon, {});
  EXPECT_EQ(later.next_sample_due, kCoarse - 2);
  EXPECT_EQ(later.maximum, latestOf(missed));
}

TEST(CoarseSeriesTest, TheReplayForecastsTheDueSamplesAndSaysWhen) {
  const CoarseSeries series(8);
  GridHistory history;
  history.start = Clock::time_point(std::chrono::hours(24 * 20000));  // a midnight
  history.length = series.grid.size();
  history.series.push_back(GridSeries{.labels = {{"pod", "a"}}, .values = series.grid});
  config::ForecastRule rule;
  rule.name = "demand";
  const ObserverPageData page = replayHistory(rule, history, kMinutesPerDay, {}, {});
  ASSERT_EQ(page.series.size(), 1u);
  const ObservedSeries& replayed = page.series[0];
  // The history ends at 23:59, 29 minutes after the latest sample.
  EXPECT_NE(replayed.sampling.find("; next sample due in 1m, inside the 10m window"),
            std::string::npos)
      << replayed.sampling;
  ASSERT_FALSE(replayed.baselines.empty());
  ASSERT_EQ(replayed.baselines[0].method, Method::kLatestValue);
  // Read at t, as a normal rule reads it, the latest value has the new sample as soon as it is
  // scraped, and on the lookback's grid the next one is never inside the window of a step that
  // is scored: it cannot be beaten here, and the served forecast, which reads the same value
  // at t, must not be worse.
  EXPECT_LE(replayed.replay.mape, replayed.baselines[0].replay.mape);
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

// A read serves the latest value it knows (the fresh instant query), not the history's last
// step: the latest value method serves it, every other window is raised to it, a combination
// raises each of its parts first; without it the refresh's windows serve.
TEST(ServedAtTest, TheReadsLatestValueServesAndFloors) {
  Forecast latest;
  latest.method = Method::kLatestValue;
  latest.windows = {40, 40};
  EXPECT_EQ(servedAt(latest, 0, 12.5), 12.5);
  EXPECT_EQ(servedAt(latest, 1, 55), 55);
  EXPECT_EQ(servedAt(latest, 1, std::numeric_limits<double>::quiet_NaN()), 40);

  Forecast day;
  day.method = Method::kSeasonalNaiveDay;
  day.windows = {15, 20};  // the first raised to the history's last value, 15
  day.unfloored_windows = {10, 20};
  EXPECT_EQ(servedAt(day, 0, 12), 12);  // demand fell since the last step: not 15
  EXPECT_EQ(servedAt(day, 1, 12), 20);
  EXPECT_EQ(servedAt(day, 1, 25), 25);
  EXPECT_EQ(servedAt(day, 5, 1), 20);  // past the last window: the last one
  EXPECT_EQ(servedAt(day, 0, std::numeric_limits<double>::quiet_NaN()), 15);

  Forecast low;
  low.method = Method::kCombinedLow;
  low.windows = {30};
  low.combined_parts = {{10, 30}};
  EXPECT_EQ(servedAt(low, 0, 20), 20);  // min(max(10, 20), max(30, 20))
  EXPECT_EQ(servedAt(low, 0, 5), 10);
  low.method = Method::kCombinedMean;
  EXPECT_EQ(servedAt(low, 0, 20), 25);
}

// The windows forecastWith makes carry what a read needs to raise them to its own latest value:
// raising them to the history's last value gives the windows as the refresh served them.
TEST(ServedAtTest, ForecastWithKeepsTheUnflooredWindows) {
  std::vector<float> history(3 * 24 * 60);
  for (std::size_t i = 0; i < history.size(); ++i) {
    history[i] =
        static_cast<float>(50 + 30 * std::sin(2 * 3.14159265 * static_cast<double>(i) / 1440.0));
  }
  const double last = history.back();
  for (const Method method : {Method::kSeasonalNaiveDay, Method::kHoltWinters, Method::kCombinedLow,
                              Method::kCombinedMean}) {
    Selection selection;
    selection.method = method;
    const Forecast forecast =
        forecastWith(selection, history, std::chrono::seconds(60), 10, ModelOptions{}, 3);
    ASSERT_EQ(forecast.windows.size(), 4u) << methodKey(method);
    EXPECT_NEAR(servedAt(forecast, 0, last), forecast.windows[0], 1e-9) << methodKey(method);
    EXPECT_GE(servedAt(forecast, 2, last + 1000), last + 1000) << methodKey(method);
  }
}

// Scale to zero (docs/forecasting.md "Scale to zero at night"): a demand measured where it arrives
// that is 0 every night. Served as a server serves it (the forecast made two steps before the
// read, raised to the value at the read), the night serves exactly 0, so an HPA with
// minReplicas: 0 can park the Deployment, and the value rises above 0 a horizon before the
// morning ramp, so the HPA leaves 0 ahead of the demand.
TEST(ScaleToZeroTest, ANightOfZeroServesZeroAndTheRampIsSeenAHorizonAhead) {
  LoadShape shape = dailyShape(0.05, 8);
  shape.night = 0;
  shape.ramp_minutes = 30;
  const std::size_t day = 7 * kMinutesPerDay;
  const auto series = synthetic::generateLoad(shape, day + kMinutesPerDay);
  constexpr int kLag = 2;
  SelectingForecaster forecaster(kStep, kHorizon, {}, {{"gateway", "bert"}}, kLag);
  // What a read at minute `t` of day 7 is served.
  const auto served_at = [&](std::size_t minute) {
    const std::size_t t = day + minute;
    const std::span<const float> history(series.data(), t - kLag + 1);
    const Forecast forecast =
        forecaster.forecast(history, static_cast<std::int64_t>(t - kLag), kLag);
    return servedAt(forecast, kLag, series[t]);
  };
  for (const std::size_t minute : {0u, 60u, 180u, 300u, 340u}) {
    ASSERT_EQ(series[day + minute], 0.0F);
    EXPECT_EQ(served_at(minute), 0.0) << "minute " << minute << " of the night";
  }
  // The ramp starts at 06:00 (minute 360): the window of a read a horizon before it reaches it.
  const std::size_t first_above = [&] {
    for (std::size_t minute = 330; minute <= 360; ++minute) {
      if (served_at(minute) > 0) return minute;
    }
    return std::size_t{361};
  }();
  EXPECT_LE(first_above, 360u - kHorizon + 1) << forecaster.selection()->why;
  EXPECT_GT(served_at(360 - kHorizon + 2), 0.0);
}

}  // namespace
}  // namespace metrics_adapter::forecast
