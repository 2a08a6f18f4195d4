#include "metrics_adapter/forecast/wake_ups.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace metrics_adapter::forecast {
namespace {

// Replay points from the demand and the served forecast, one a step.
std::vector<BacktestPoint> replay(const std::vector<double>& actual,
                                  const std::vector<double>& forecast) {
  std::vector<BacktestPoint> points;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    points.push_back(BacktestPoint{
        .index = i + 100, .actual = actual[i], .forecast = forecast[i], .actual_max = actual[i]});
  }
  return points;
}

TEST(WakeUpsTest, TheForecastLeavesZeroAheadOfTheDemand) {
  // Target 5: 0.4 and 5 are 0 and 1 replicas; the forecast rises 3 steps before the demand.
  const auto points = replay({0, 0, 0, 0, 0, 6, 9, 0, 0}, {0, 0, 3, 6, 9, 9, 9, 0, 0});
  const std::vector<WakeUp> wake_ups = wakeUps(points, 5);
  ASSERT_EQ(wake_ups.size(), 1u);
  EXPECT_EQ(wake_ups[0].forecast_index, 102u);
  EXPECT_EQ(wake_ups[0].reactive_index, 105u);
}

TEST(WakeUpsTest, ALateForecastIsPairedWithTheDemandBeforeIt) {
  const auto points = replay({0, 0, 7, 7, 7, 0, 0, 0, 0, 4}, {0, 0, 0, 0, 8, 0, 0, 0, 0, 0});
  const std::vector<WakeUp> wake_ups = wakeUps(points, 5);
  ASSERT_EQ(wake_ups.size(), 1u);
  EXPECT_EQ(wake_ups[0].forecast_index, 104u);
  EXPECT_EQ(wake_ups[0].reactive_index, 102u);
}

TEST(WakeUpsTest, EachNightOnceAndADemandThatStaysAtZero) {
  const double nan = std::nan("");
  const auto points = replay({0, 0, 6, 0, 0, nan, 0, 0}, {0, 3, 6, 0, 0, 9, 2, 0});
  const std::vector<WakeUp> wake_ups = wakeUps(points, 5);
  ASSERT_EQ(wake_ups.size(), 2u);
  EXPECT_EQ(wake_ups[0].forecast_index, 101u);
  EXPECT_EQ(wake_ups[0].reactive_index, 102u);
  // The skipped step (NaN demand) does not count: the forecast leaves 0 again at 106, and the
  // demand does not follow that night.
  EXPECT_EQ(wake_ups[1].forecast_index, 106u);
  EXPECT_FALSE(wake_ups[1].reactive_index.has_value());
}

TEST(WakeUpsTest, AForecastThatNeverServesZeroNeverWakes) {
  EXPECT_TRUE(wakeUps(replay({0, 0, 6}, {1, 1, 6}), 5).size() == 0u);
}

}  // namespace
}  // namespace metrics_adapter::forecast
