#include "metrics_adapter/forecast/baselines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "unit/forecast/synthetic_load.h"

namespace metrics_adapter::forecast {
namespace {

using synthetic::kMinutesPerDay;

constexpr std::chrono::seconds kBaselineStep{60};
constexpr std::chrono::seconds kBaselineDay{24 * 3600};

TEST(SeasonalNaiveTest, RepeatsTheValuesOneSeasonEarlier) {
  synthetic::LoadShape shape;
  shape.noise = 0.05;
  const std::vector<float> series = synthetic::generateLoad(shape, 2 * kMinutesPerDay + 500);
  const std::vector<double> values = seasonalNaive(series, kBaselineStep, kBaselineDay, 10);
  ASSERT_EQ(values.size(), 11u);
  for (std::size_t h = 0; h <= 10; ++h) {
    EXPECT_EQ(values[h], series[series.size() - 1 + h - kMinutesPerDay]) << h;
  }
}

TEST(SeasonalNaiveTest, WrapsAHorizonLongerThanTheSeason) {
  const std::vector<float> series = {1, 2, 3, 4, 5, 6};
  // Season of 3 steps: t+1 -> index 3, t+2 -> 4, t+3 -> 5, t+4 -> 3 again.
  const std::vector<double> values =
      seasonalNaive(series, kBaselineStep, std::chrono::minutes(3), 4);
  EXPECT_EQ(values, (std::vector<double>{3, 4, 5, 6, 4}));
}

TEST(SeasonalNaiveTest, ShortHistoryAndGapsServeTheLatestValue) {
  const std::vector<float> short_series = {1, 2, 3};
  EXPECT_EQ(seasonalNaive(short_series, kBaselineStep, kBaselineDay, 2),
            (std::vector<double>{3, 3, 3}));
  const std::vector<float> gap = {1, NAN, 3, 4, 5};
  // t - 3 is a gap (the latest value instead), t + 1 - 3 holds 3.
  EXPECT_EQ(seasonalNaive(gap, kBaselineStep, std::chrono::minutes(3), 1),
            (std::vector<double>{5, 3}));
}

TEST(HoltWintersTest, FollowsANoiseFreeDailyRhythm) {
  const synthetic::LoadShape shape;
  for (const std::size_t minute : {3 * 60, 7 * 60, 12 * 60, 19 * 60}) {
    const std::size_t now = 3 * kMinutesPerDay + minute;
    const std::vector<float> series = synthetic::generateLoad(shape, now + 1);
    const std::vector<double> values = holtWinters(series, kBaselineStep, kBaselineDay, 10);
    ASSERT_EQ(values.size(), 11u);
    for (std::size_t h = 0; h <= 10; ++h) {
      const double expected = synthetic::noiseFree(shape, now + h);
      EXPECT_NEAR(values[h], expected, 0.03 * expected) << minute << " + " << h;
    }
  }
}

TEST(HoltWintersTest, FollowsALinearTrend) {
  std::vector<float> series;
  series.reserve(300);
  for (int i = 0; i < 300; ++i) series.push_back(static_cast<float>(10 + 0.5 * i + (i % 20)));
  const std::vector<double> values =
      holtWinters(series, kBaselineStep, std::chrono::minutes(20), 5);
  for (int h = 0; h <= 5; ++h) {
    const int i = 299 + h;
    EXPECT_NEAR(values[static_cast<std::size_t>(h)], 10 + 0.5 * i + (i % 20), 1.0) << h;
  }
}

TEST(HoltWintersTest, LessThanTwoSeasonsServesTheLatestValue) {
  const synthetic::LoadShape shape;
  const std::vector<float> series = synthetic::generateLoad(shape, 2 * kMinutesPerDay - 1);
  const std::vector<double> values = holtWinters(series, kBaselineStep, kBaselineDay, 3);
  EXPECT_EQ(values, std::vector<double>(4, series.back()));
}

TEST(HoltWintersTest, CurvesInOnePassAreTheForecastsAtEachStep) {
  synthetic::LoadShape shape;
  shape.noise = 0.05;
  shape.gaps.push_back({3 * kMinutesPerDay + 100, 30});
  const std::vector<float> series = synthetic::generateLoad(shape, 3 * kMinutesPerDay + 400);
  const HoltWintersParameters parameters{0.5, 0.01, 0.2};
  constexpr int kHorizon = 10;
  // From before two seasons (the latest value) to the end, across the gap.
  const std::size_t first = 2 * kMinutesPerDay - 5;
  const std::vector<double> curves =
      holtWintersCurves(series, kBaselineStep, kBaselineDay, kHorizon, parameters, first);
  ASSERT_EQ(curves.size(), (series.size() - first) * (kHorizon + 1));
  for (std::size_t t = first; t < series.size(); t += 37) {
    const std::vector<double> expected = holtWintersWith(
        std::span(series).first(t + 1), kBaselineStep, kBaselineDay, kHorizon, parameters);
    for (std::size_t h = 0; h <= kHorizon; ++h) {
      const double got = curves[(t - first) * (kHorizon + 1) + h];
      if (std::isnan(expected[h])) {
        EXPECT_TRUE(std::isnan(got)) << t << " + " << h;
      } else {
        EXPECT_NEAR(got, expected[h], 1e-9 * std::max(1.0, std::abs(expected[h])))
            << t << " + " << h;
      }
    }
  }
}

}  // namespace
}  // namespace metrics_adapter::forecast
