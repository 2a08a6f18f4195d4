#include "metrics_adapter/forecast/backtest.h"

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
using synthetic::kMinutesPerHour;

constexpr double kMinute = 60;  // seconds

// 0 for 30 steps, a ramp of +5 a step to 100, then 100 (the crossing of 50 is at index 39).
std::vector<float> rampSeries() {
  std::vector<float> series(30, 0);
  for (int i = 1; i <= 20; ++i) series.push_back(static_cast<float>(5 * i));
  for (int i = 0; i < 30; ++i) series.push_back(100);
  return series;
}

// Forecasts the series `shift` steps ahead of the history's end (the actual future: a perfect
// forecaster at shift 0; negative shifts are late). `full` is the whole series.
Forecaster shiftedForecaster(std::span<const float> full, int shift) {
  return [full, shift](std::span<const float> history, int horizon_steps) {
    // The history ends at full[end - 1]: it is a subspan of `full`.
    const auto end = static_cast<std::ptrdiff_t>(history.data() + history.size() - full.data());
    std::vector<double> values;
    for (int h = 0; h <= horizon_steps; ++h) {
      const std::ptrdiff_t i =
          std::clamp<std::ptrdiff_t>(end - 1 + h + shift, 0, std::ssize(full) - 1);
      values.push_back(full[static_cast<std::size_t>(i)]);
    }
    return values;
  };
}

BacktestOptions rampOptions() {
  BacktestOptions options;
  options.horizon_steps = 10;
  options.threshold = 50;
  return options;
}

TEST(BacktestTest, APerfectForecastLeadsByTheHorizon) {
  const std::vector<float> series = rampSeries();
  const BacktestResult result = backtest(series, 5, rampOptions(), shiftedForecaster(series, 0));
  EXPECT_EQ(result.mape, 0);
  EXPECT_EQ(result.under_forecast_ratio, 0);
  // Replayed: 5 .. size - 1 - horizon.
  ASSERT_EQ(result.points.size(), series.size() - 10 - 5);
  EXPECT_EQ(result.points.front().index, 5u);
  ASSERT_EQ(result.lead_times_seconds.size(), 1u);
  // The served max over [t, t + 10] reaches 50 at t = 29: 10 steps before index 39.
  EXPECT_EQ(result.lead_time_seconds, 10 * kMinute);
}

TEST(BacktestTest, LateForecastsHaveNegativeLeads) {
  const std::vector<float> series = rampSeries();
  // Serves the values 13 steps late: its max over the horizon crosses at 42.
  const BacktestResult late = backtest(series, 5, rampOptions(), shiftedForecaster(series, -13));
  EXPECT_EQ(late.lead_time_seconds, -3 * kMinute);
  EXPECT_GT(late.under_forecast_ratio, 0);
  // Never reaching the threshold: late by the rest of the replay (last index 69, crossing 39).
  const auto never = [](std::span<const float>, int h) {
    return std::vector<double>(static_cast<std::size_t>(h) + 1, 10.0);
  };
  EXPECT_EQ(backtest(series, 5, rampOptions(), never).lead_time_seconds, -31 * kMinute);
}

TEST(BacktestTest, TheLeadCountsOnlyWhileTheActualWasBelow) {
  // The actual dips below 50 for 12 steps and rises again at 67: a second crossing, whose lead
  // cannot exceed the 12 steps below though the forecast stayed above. The first one's lead
  // reaches back to the replay's first step, 5.
  std::vector<float> series = rampSeries();
  for (std::size_t i = 55; i < 67; ++i) series[i] = 40;
  const auto always_high = [](std::span<const float>, int h) {
    return std::vector<double>(static_cast<std::size_t>(h) + 1, 100.0);
  };
  const BacktestResult result = backtest(series, 5, rampOptions(), always_high);
  EXPECT_EQ(result.lead_times_seconds, (std::vector<double>{34 * kMinute, 12 * kMinute}));
  EXPECT_EQ(result.lead_time_seconds, (34 + 12) * kMinute / 2);
}

TEST(BacktestTest, FlappingAroundTheThresholdIsOneCrossing) {
  std::vector<float> series = rampSeries();
  series[41] = 45;  // 39: 50, 40: 55, 41: below again, 42: above
  const BacktestResult result = backtest(series, 5, rampOptions(), shiftedForecaster(series, 0));
  EXPECT_EQ(result.lead_times_seconds.size(), 1u);
}

// With the serving lag the forecast served at t is made at t - lag, and covers [t, t + horizon]:
// the latest value then is the value lag steps back, and a forecaster that knows the future
// serves what it served without a lag.
TEST(BacktestTest, TheLagMovesTheOriginNotTheWindow) {
  const std::vector<float> series = rampSeries();
  BacktestOptions lagged = rampOptions();
  lagged.lag_steps = 3;
  const BacktestResult latest =
      backtest(series, 0, lagged, [](std::span<const float> history, int horizon_steps) {
        return std::vector<double>(static_cast<std::size_t>(horizon_steps) + 1, history.back());
      });
  ASSERT_FALSE(latest.points.empty());
  EXPECT_EQ(latest.points.front().index, lagged.lag_steps);
  for (const BacktestPoint& p : latest.points) {
    EXPECT_EQ(p.forecast, series[p.index - lagged.lag_steps]) << "at " << p.index;
  }
  // The crossing of 50 at index 39 is seen lag steps late: 39 - 3 = 36 still reads 35.
  ASSERT_TRUE(latest.lead_time_seconds.has_value());
  EXPECT_DOUBLE_EQ(*latest.lead_time_seconds, -static_cast<double>(lagged.lag_steps) * kMinute);

  const BacktestResult perfect = backtest(series, 5, lagged, shiftedForecaster(series, 0));
  const BacktestResult unlagged = backtest(series, 5, rampOptions(), shiftedForecaster(series, 0));
  ASSERT_EQ(perfect.points.size(), unlagged.points.size());
  for (std::size_t i = 0; i < perfect.points.size(); ++i) {
    EXPECT_EQ(perfect.points[i].forecast, unlagged.points[i].forecast);
  }
  EXPECT_EQ(perfect.lead_time_seconds, unlagged.lead_time_seconds);
}

TEST(BacktestTest, MapeAndUnderForecastRatio) {
  const std::vector<float> flat(50, 100);
  BacktestOptions options;
  options.horizon_steps = 5;
  const auto constant = [](double v) {
    return [v](std::span<const float>, int h) {
      return std::vector<double>(static_cast<std::size_t>(h) + 1, v);
    };
  };
  const BacktestResult over = backtest(flat, 0, options, constant(110));
  EXPECT_NEAR(over.mape, 0.1, 1e-12);
  EXPECT_EQ(over.under_forecast_ratio, 0);
  const BacktestResult under = backtest(flat, 0, options, constant(80));
  EXPECT_NEAR(under.mape, 0.2, 1e-12);
  EXPECT_EQ(under.under_forecast_ratio, 1);
  EXPECT_FALSE(under.lead_time_seconds);  // no threshold
}

TEST(BacktestTest, SkipsNaNAndLimitsTheHistory) {
  std::vector<float> series(40, 1);
  series[20] = NAN;
  BacktestOptions options;
  options.horizon_steps = 2;
  options.history_steps = 7;
  std::size_t longest = 0;
  const BacktestResult result =
      backtest(series, 3, options, [&longest](std::span<const float> history, int h) {
        longest = std::max(longest, history.size());
        return std::vector<double>(static_cast<std::size_t>(h) + 1, history.back());
      });
  EXPECT_EQ(longest, 7u);
  EXPECT_EQ(result.points.size(), 40u - 2 - 3 - 1);
  EXPECT_TRUE(std::none_of(result.points.begin(), result.points.end(),
                           [](const BacktestPoint& p) { return p.index == 20; }));
}

TEST(BacktestTest, TheModelLeadsTheMorningRampOfANoisyDay) {
  synthetic::LoadShape shape;
  shape.noise = 0.05;
  // A week of history, then 05:30 to 09:30 of day 7 replayed.
  const std::size_t first = 7 * kMinutesPerDay + 5 * kMinutesPerHour + 30;
  const std::vector<float> series = synthetic::generateLoad(shape, first + 4 * kMinutesPerHour);
  BacktestOptions options;
  options.threshold = 0.6 * shape.peak;
  const BacktestResult result =
      backtest(series, first, options, modelForecaster(options.step, ModelOptions{}));
  ASSERT_TRUE(result.lead_time_seconds);
  EXPECT_GE(*result.lead_time_seconds, 5 * kMinute);
  EXPECT_LE(*result.lead_time_seconds, 20 * kMinute);
  EXPECT_LE(result.mape, 0.10);
}

}  // namespace
}  // namespace metrics_adapter::forecast
