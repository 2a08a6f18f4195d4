#include "metrics_adapter/forecast/model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "forecast/rhythm.h"
#include "unit/forecast/synthetic_load.h"

namespace metrics_adapter::forecast {
namespace {

using synthetic::kMinutesPerDay;
using synthetic::kMinutesPerHour;
using synthetic::LoadShape;

constexpr std::chrono::seconds kModelStep{60};
constexpr int kModelHorizon = 10;

LoadShape noisyDaily(std::uint64_t seed = 1) {
  LoadShape shape;
  shape.noise = 0.05;
  shape.seed = seed;
  return shape;
}

// The forecast at index `now` from the `history_days` days before it (now included).
Forecast forecastAt(const std::vector<float>& series, std::size_t now, std::size_t history_days,
                    ModelOptions options = {}) {
  const std::size_t length = std::min(now + 1, history_days * kMinutesPerDay);
  return forecastAhead(std::span(series).subspan(now + 1 - length, length), kModelStep,
                       kModelHorizon, options);
}

double relativeError(double value, double expected) {
  return std::abs(value - expected) / expected;
}

TEST(ForecastModelTest, FindsTheDailyRhythmInAWeek) {
  const std::vector<float> series = synthetic::generateLoad(noisyDaily(), 7 * kMinutesPerDay);
  const Forecast forecast = forecastAhead(series, kModelStep, kModelHorizon, {});
  EXPECT_EQ(forecast.method, Method::kSeasonal);
  EXPECT_EQ(forecast.period, std::chrono::hours(24));
  EXPECT_NE(forecast.why.find("daily rhythm (24h) found in 7.0 days of history"), std::string::npos)
      << forecast.why;
  ASSERT_EQ(forecast.values.size(), static_cast<std::size_t>(kModelHorizon) + 1);
  EXPECT_EQ(forecast.maximum, *std::max_element(forecast.values.begin(), forecast.values.end()));
}

TEST(ForecastModelTest, FindsTheWeeklyRhythmOnlyWithTwoWeeks) {
  LoadShape shape = noisyDaily(2);
  shape.weekend_amplitude = 0.4;
  const std::vector<float> series = synthetic::generateLoad(shape, 21 * kMinutesPerDay);
  const Forecast three_weeks = forecastAhead(series, kModelStep, kModelHorizon, {});
  EXPECT_EQ(three_weeks.period, std::chrono::hours(24 * 7)) << three_weeks.why;
  EXPECT_NE(three_weeks.why.find("weekly rhythm (7d) found in 21.0 days"), std::string::npos);

  const Forecast ten_days = forecastAt(series, series.size() - 1, 10);
  EXPECT_EQ(ten_days.period, std::chrono::hours(24)) << ten_days.why;
}

TEST(ForecastModelTest, ADailyRhythmAloneIsNotWeekly) {
  const std::vector<float> series = synthetic::generateLoad(noisyDaily(3), 21 * kMinutesPerDay);
  const rhythm::RhythmReport report = rhythm::detectRhythm(series, kModelStep);
  ASSERT_TRUE(report.weekly && report.daily && report.chosen);
  EXPECT_FALSE(report.weekly->accepted);
  EXPECT_EQ(report.chosen->period, rhythm::kDay);
  EXPECT_GT(report.daily->autocorrelation, 0.8);
}

// Times of day on day 7 (a week of history), with the noise-free maximum of the next 10 minutes.
struct TimeOfDayCase {
  std::string name;
  std::size_t minute;
};

class ForecastTimeOfDayTest : public ::testing::TestWithParam<TimeOfDayCase> {};

TEST_P(ForecastTimeOfDayTest, NoiseFreeHistoryIsForecastWithin2Percent) {
  const LoadShape shape;  // no noise
  const std::size_t now = 7 * kMinutesPerDay + GetParam().minute;
  const std::vector<float> series = synthetic::generateLoad(shape, now + 1);
  const Forecast forecast = forecastAt(series, now, 7);
  const double expected = synthetic::noiseFreeMax(shape, now, kModelHorizon);
  EXPECT_LT(relativeError(forecast.maximum, expected), 0.02)
      << forecast.maximum << " vs " << expected;
}

TEST_P(ForecastTimeOfDayTest, NoisyHistoryIsForecastWithin10Percent) {
  const LoadShape shape = noisyDaily(4);
  const std::size_t now = 7 * kMinutesPerDay + GetParam().minute;
  const std::vector<float> series = synthetic::generateLoad(shape, now + 1);
  const Forecast forecast = forecastAt(series, now, 7);
  const double expected = synthetic::noiseFreeMax(shape, now, kModelHorizon);
  EXPECT_LT(relativeError(forecast.maximum, expected), 0.10)
      << forecast.maximum << " vs " << expected;
}

INSTANTIATE_TEST_SUITE_P(Day, ForecastTimeOfDayTest,
                         ::testing::Values(TimeOfDayCase{"Night", 3 * kMinutesPerHour},
                                           TimeOfDayCase{"MorningRamp", 7 * kMinutesPerHour + 30},
                                           TimeOfDayCase{"Plateau", 11 * kMinutesPerHour},
                                           TimeOfDayCase{"LunchDip", 12 * kMinutesPerHour + 25},
                                           TimeOfDayCase{"EveningDecline", 19 * kMinutesPerHour}),
                         [](const auto& info) { return info.param.name; });

TEST(ForecastModelTest, TheRampIsForecastBeforeItHappens) {
  // At 07:00 the next 10 minutes rise: the served value is above the current demand.
  const LoadShape shape;
  const std::size_t now = 7 * kMinutesPerDay + 7 * kMinutesPerHour;
  const std::vector<float> series = synthetic::generateLoad(shape, now + 1);
  const Forecast forecast = forecastAt(series, now, 7);
  EXPECT_GT(forecast.maximum, synthetic::noiseFree(shape, now) * 1.05);
  EXPECT_GT(forecast.values.back(), forecast.values.front());
}

TEST(ForecastModelTest, OneDayOfHistoryServesTheLatestValue) {
  const std::vector<float> series = synthetic::generateLoad(noisyDaily(), kMinutesPerDay);
  const Forecast forecast = forecastAhead(series, kModelStep, kModelHorizon, {});
  EXPECT_EQ(forecast.method, Method::kLatestValue);
  EXPECT_EQ(forecast.why,
            "only 1.0 days of history; a forecast needs 2 days: serving the latest value");
  ASSERT_EQ(forecast.values.size(), static_cast<std::size_t>(kModelHorizon) + 1);
  for (const double v : forecast.values) EXPECT_EQ(v, series.back());
  EXPECT_EQ(forecast.maximum, series.back());
}

TEST(ForecastModelTest, LeadingGapsDoNotCountAsHistory) {
  std::vector<float> series = synthetic::generateLoad(noisyDaily(), 3 * kMinutesPerDay);
  std::fill(series.begin(), series.begin() + 2 * kMinutesPerDay,
            std::numeric_limits<float>::quiet_NaN());
  const Forecast forecast = forecastAhead(series, kModelStep, kModelHorizon, {});
  EXPECT_EQ(forecast.method, Method::kLatestValue);
  EXPECT_NE(forecast.why.find("only 1.0 days"), std::string::npos) << forecast.why;
}

TEST(ForecastModelTest, FlatNoiseHasNoRhythm) {
  LoadShape shape = noisyDaily(5);
  shape.peak = shape.night;
  shape.noise = 0.1;
  const std::vector<float> series = synthetic::generateLoad(shape, 7 * kMinutesPerDay);
  const Forecast forecast = forecastAhead(series, kModelStep, kModelHorizon, {});
  EXPECT_EQ(forecast.method, Method::kLatestValue);
  EXPECT_EQ(forecast.why,
            "no daily or weekly rhythm found in 7.0 days of history: serving the latest value");
  EXPECT_EQ(forecast.maximum, series.back());
}

TEST(ForecastModelTest, ATrendWithoutRhythmIsNoRhythm) {
  LoadShape shape = noisyDaily(6);
  shape.peak = shape.night;
  shape.trend_per_day = 40;
  const std::vector<float> series = synthetic::generateLoad(shape, 7 * kMinutesPerDay);
  EXPECT_EQ(forecastAhead(series, kModelStep, kModelHorizon, {}).method, Method::kLatestValue);
}

TEST(ForecastModelTest, EmptyOrAllNaNHistoryGivesNaN) {
  const std::vector<float> nan_history(3 * kMinutesPerDay, std::numeric_limits<float>::quiet_NaN());
  for (const std::span<const float> history :
       {std::span<const float>(), std::span<const float>(nan_history)}) {
    const Forecast forecast = forecastAhead(history, kModelStep, kModelHorizon, {});
    EXPECT_EQ(forecast.method, Method::kLatestValue);
    EXPECT_TRUE(std::isnan(forecast.maximum));
    EXPECT_EQ(forecast.values.size(), static_cast<std::size_t>(kModelHorizon) + 1);
  }
}

TEST(ForecastModelTest, TheLatestValueSkipsTrailingGapsAndInfinities) {
  std::vector<float> series = {5, 7, std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity()};
  const Forecast forecast = forecastAhead(series, kModelStep, -3, {});
  EXPECT_EQ(forecast.method, Method::kLatestValue);
  ASSERT_EQ(forecast.values.size(), 1u);
  EXPECT_EQ(forecast.maximum, 7);
}

TEST(ForecastModelTest, ANonPositiveStepServesTheLatestValue) {
  const std::vector<float> series = synthetic::generateLoad(noisyDaily(), 7 * kMinutesPerDay);
  const Forecast forecast = forecastAhead(series, std::chrono::seconds(0), kModelHorizon, {});
  EXPECT_EQ(forecast.method, Method::kLatestValue);
  EXPECT_EQ(forecast.maximum, series.back());
}

TEST(ForecastModelTest, AnAnomalousDayBarelyMovesTheForecast) {
  LoadShape shape = noisyDaily(7);
  const std::size_t now = 7 * kMinutesPerDay + 10 * kMinutesPerHour;
  const std::vector<float> normal = synthetic::generateLoad(shape, now + 1);
  shape.anomaly_day = 6;  // yesterday, twice the demand
  shape.anomaly_factor = 2;
  const std::vector<float> anomalous = synthetic::generateLoad(shape, now + 1);
  const double expected = forecastAt(normal, now, 7).maximum;
  const double with_anomaly = forecastAt(anomalous, now, 7).maximum;
  EXPECT_LT(relativeError(with_anomaly, expected), 0.03) << with_anomaly << " vs " << expected;
}

TEST(ForecastModelTest, ALevelShiftIsFollowedWithin15Steps) {
  LoadShape shape = noisyDaily(8);
  const std::size_t shift_at = 7 * kMinutesPerDay + 12 * kMinutesPerHour;
  shape.shift_at = shift_at;
  shape.shift = 0.3 * shape.peak;
  const std::vector<float> series = synthetic::generateLoad(shape, shift_at + 60);
  for (std::size_t after = 15; after < 60; after += 11) {
    const std::size_t now = shift_at + after;
    const double expected = synthetic::noiseFreeMax(shape, now, kModelHorizon);
    const double forecast = forecastAt(series, now, 7).maximum;
    EXPECT_LT(relativeError(forecast, expected), 0.10) << after << " steps after the shift";
  }
}

TEST(ForecastModelTest, ATrendIsFollowed) {
  LoadShape shape = noisyDaily(9);
  shape.trend_per_day = 0.05 * shape.peak;
  const std::size_t now = 7 * kMinutesPerDay + 14 * kMinutesPerHour;
  const std::vector<float> series = synthetic::generateLoad(shape, now + 1);
  const double expected = synthetic::noiseFreeMax(shape, now, kModelHorizon);
  const double forecast = forecastAt(series, now, 7).maximum;
  EXPECT_LT(relativeError(forecast, expected), 0.08) << forecast << " vs " << expected;
}

TEST(ForecastModelTest, GapsAreTolerated) {
  LoadShape shape = noisyDaily(10);
  const std::size_t now = 7 * kMinutesPerDay + 8 * kMinutesPerHour;
  shape.gaps = {{6 * kMinutesPerDay + 7 * kMinutesPerHour, 120},  // yesterday's ramp
                {now - 30, 25},                                   // most of the last half hour
                {2 * kMinutesPerDay, kMinutesPerDay}};            // a whole day
  const std::vector<float> series = synthetic::generateLoad(shape, now + 1);
  const Forecast forecast = forecastAt(series, now, 7);
  EXPECT_EQ(forecast.method, Method::kSeasonal);
  const double expected = synthetic::noiseFreeMax(shape, now, kModelHorizon);
  EXPECT_LT(relativeError(forecast.maximum, expected), 0.10)
      << forecast.maximum << " vs " << expected;
}

TEST(ForecastModelTest, ANewWorkloadWithTwoDaysIsForecast) {
  const LoadShape shape = noisyDaily(11);
  const std::size_t now = 2 * kMinutesPerDay + 11 * kMinutesPerHour;
  const std::vector<float> series = synthetic::generateLoad(shape, now + 1);
  const Forecast forecast = forecastAt(series, now, 7);
  EXPECT_EQ(forecast.period, std::chrono::hours(24)) << forecast.why;
  EXPECT_LT(relativeError(forecast.maximum, synthetic::noiseFreeMax(shape, now, kModelHorizon)),
            0.10);
}

TEST(ForecastModelTest, AHigherQuantileRaisesTheForecast) {
  const std::vector<float> series =
      synthetic::generateLoad(noisyDaily(12), 7 * kMinutesPerDay + 13 * kMinutesPerHour);
  const std::size_t now = series.size() - 1;
  const double median = forecastAt(series, now, 7, {.quantile = 0.5}).maximum;
  const double q90 = forecastAt(series, now, 7, {.quantile = 0.9}).maximum;
  const double out_of_range = forecastAt(series, now, 7, {.quantile = 5}).maximum;
  EXPECT_GT(q90, median * 1.01);
  EXPECT_GE(out_of_range, q90);  // clamped to 0.99
  EXPECT_LT(out_of_range, median * 1.5);
}

TEST(ForecastModelTest, IsDeterministic) {
  const std::vector<float> series = synthetic::generateLoad(noisyDaily(13), 7 * kMinutesPerDay);
  const Forecast a = forecastAhead(series, kModelStep, kModelHorizon, {.quantile = 0.8});
  const Forecast b = forecastAhead(series, kModelStep, kModelHorizon, {.quantile = 0.8});
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.why, b.why);
}

TEST(ForecastModelTest, NegativeSeriesAreForecastAdditively) {
  // A rhythm around zero (e.g. a net flow): shifted down so it goes negative at night.
  LoadShape shape = noisyDaily(14);
  shape.noise = 0;
  shape.shift_at = 0;
  const std::size_t now = 7 * kMinutesPerDay + 11 * kMinutesPerHour;
  std::vector<float> series = synthetic::generateLoad(shape, now + 1);
  for (float& v : series) v -= 200;
  const Forecast forecast = forecastAt(series, now, 7);
  EXPECT_EQ(forecast.method, Method::kSeasonal);
  const double expected = synthetic::noiseFreeMax(shape, now, kModelHorizon) - 200;
  EXPECT_NEAR(forecast.maximum, expected, 0.02 * shape.peak);
}

}  // namespace
}  // namespace metrics_adapter::forecast
