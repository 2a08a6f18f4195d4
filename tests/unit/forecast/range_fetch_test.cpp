#include "metrics_adapter/forecast/range_fetch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "unit/fake_prometheus.h"

// Its own namespace: unit_forecast is a unity build shared with the other forecast tests.
namespace metrics_adapter::forecast::range_fetch_test {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using Labels = std::map<std::string, std::string>;

// 2024-05-01T12:00:00Z, on every grid used here.
const Clock::time_point kT0{seconds(1714564800)};

double secondsOf(Clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

std::size_t pointsIn(const TimeRange& chunk, seconds step) {
  return static_cast<std::size_t>((chunk.end - chunk.start) / step) + 1;
}

TEST(PlanChunksTest, ChunksCoverTheGridInOrderWithoutOverlap) {
  struct Case {
    std::string name;
    Clock::duration span;  // end - start
    seconds step;
    std::size_t max_points;
    std::vector<std::size_t> chunk_points;  // points per chunk, in order
  };
  const Case cases[] = {
      {"exactly 11000 points", minutes(10999), seconds(60), kMaxPointsPerQuery, {11000}},
      {"11001 points", minutes(11000), seconds(60), kMaxPointsPerQuery, {11000, 1}},
      {"7 days at 1m", hours(24 * 7), seconds(60), kMaxPointsPerQuery, {10081}},
      {"14 days at 1m", hours(24 * 14), seconds(60), kMaxPointsPerQuery, {11000, 9161}},
      {"1 day at 15s", hours(24), seconds(15), kMaxPointsPerQuery, {5761}},
      {"2 days at 15s", hours(48), seconds(15), kMaxPointsPerQuery, {11000, 521}},
      {"one point", seconds(0), seconds(60), kMaxPointsPerQuery, {1}},
      {"end between grid points", seconds(150), seconds(60), kMaxPointsPerQuery, {3}},
      {"end just before a grid point", milliseconds(119999), seconds(60), kMaxPointsPerQuery, {2}},
      {"small chunks", minutes(6), seconds(60), 3, {3, 3, 1}},
      {"one point per chunk", minutes(2), seconds(60), 1, {1, 1, 1}},
  };
  for (const auto& c : cases) {
    const Clock::time_point end = kT0 + c.span;
    const std::vector<TimeRange> chunks = planChunks(kT0, end, c.step, c.max_points);
    ASSERT_EQ(chunks.size(), c.chunk_points.size()) << c.name;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      EXPECT_EQ(pointsIn(chunks[i], c.step), c.chunk_points[i]) << c.name << " chunk " << i;
      EXPECT_LE(pointsIn(chunks[i], c.step), c.max_points) << c.name;
      EXPECT_EQ((chunks[i].start - kT0) % c.step, Clock::duration::zero()) << c.name;
      EXPECT_EQ((chunks[i].end - kT0) % c.step, Clock::duration::zero()) << c.name;
      // Each chunk starts one step after the previous one ends: no gap and no point twice.
      const Clock::time_point expected_start = i == 0 ? kT0 : chunks[i - 1].end + c.step;
      EXPECT_EQ(chunks[i].start, expected_start) << c.name << " chunk " << i;
    }
    // The last chunk ends on the last grid point <= end.
    EXPECT_LE(chunks.back().end, end) << c.name;
    EXPECT_GT(chunks.back().end + c.step, end) << c.name;
  }
}

TEST(PlanChunksTest, AnEndBeforeTheStartHasNoChunks) {
  EXPECT_TRUE(planChunks(kT0, kT0 - seconds(1), seconds(60)).empty());
  EXPECT_TRUE(planChunks(kT0, kT0 - hours(24), seconds(15)).empty());
}

TEST(PlanChunksTest, AStepOrChunkSizeOfZeroIsRefused) {
  EXPECT_THROW(planChunks(kT0, kT0 + hours(1), seconds(0)), std::invalid_argument);
  EXPECT_THROW(planChunks(kT0, kT0 + hours(1), seconds(-60)), std::invalid_argument);
  EXPECT_THROW(planChunks(kT0, kT0 + hours(1), seconds(60), 0), std::invalid_argument);
}

// A series the test knows the generating function of.
double generated(double t) { return 100 + std::sin(t / 3600) * 10; }

// Answers a range call with one point per grid point of the call for each named series.
prometheus::RangeResult onGrid(const testing::FakePrometheus::RangeCall& call,
                               const std::vector<Labels>& series) {
  prometheus::RangeResult result;
  for (const auto& labels : series) {
    prometheus::RangeSeries out;
    out.labels = labels;
    for (auto t = call.start; t <= call.end; t += call.step) {
      out.times.push_back(secondsOf(t));
      out.values.push_back(generated(secondsOf(t)));
    }
    result.series.push_back(std::move(out));
  }
  return result;
}

TEST(FetchGridHistoryTest, FourteenDaysAreFetchedInTwoCallsAndStitched) {
  testing::FakePrometheus fake;
  const Labels pod_b = {{"__name__", "gpu_util"}, {"pod", "b"}};
  const Labels pod_a = {{"__name__", "gpu_util"}, {"pod", "a"}};
  fake.range_answer = [&](const testing::FakePrometheus::RangeCall& call) {
    return onGrid(call, {pod_b, pod_a});  // not in label order
  };
  const Clock::time_point end = kT0 + hours(24 * 14);

  const GridHistory history =
      fetchGridHistory(fake, "gpu_util", kT0, end, seconds(60), milliseconds(30000));

  const std::vector<TimeRange> chunks = planChunks(kT0, end, seconds(60));
  ASSERT_EQ(fake.range_calls.size(), 2u);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(fake.range_calls[i].promql, "gpu_util");
    EXPECT_EQ(fake.range_calls[i].start, chunks[i].start);
    EXPECT_EQ(fake.range_calls[i].end, chunks[i].end);
    EXPECT_EQ(fake.range_calls[i].step, milliseconds(60000));
  }
  EXPECT_EQ(history.start, kT0);
  EXPECT_EQ(history.step, seconds(60));
  ASSERT_EQ(history.length, 20161u);
  ASSERT_EQ(history.series.size(), 2u);
  EXPECT_EQ(history.series[0].labels, pod_a);
  EXPECT_EQ(history.series[1].labels, pod_b);
  for (const auto& series : history.series) {
    ASSERT_EQ(series.values.size(), history.length);
    for (std::size_t i = 0; i < history.length; ++i) {
      const double t = secondsOf(kT0) + 60.0 * static_cast<double>(i);
      ASSERT_EQ(series.values[i], static_cast<float>(generated(t))) << "point " << i;
    }
  }
}

TEST(FetchGridHistoryTest, ASeriesOnlyInALaterChunkHasNaNBeforeIt) {
  testing::FakePrometheus fake;
  const Labels early = {{"pod", "early"}};
  const Labels late = {{"pod", "late"}};
  fake.range_answer = [&](const testing::FakePrometheus::RangeCall& call) {
    if (call.start == kT0) return onGrid(call, {early});
    return onGrid(call, {late, early});
  };
  // 7 points in chunks of 3: [0..2] [3..5] [6].
  const GridHistory history = fetchGridHistory(fake, "up", kT0, kT0 + minutes(6), seconds(60),
                                               milliseconds(1000), /*max_points=*/3);
  ASSERT_EQ(fake.range_calls.size(), 3u);
  EXPECT_LT(fake.range_calls[0].end, fake.range_calls[1].start);
  EXPECT_LT(fake.range_calls[1].end, fake.range_calls[2].start);
  ASSERT_EQ(history.length, 7u);
  ASSERT_EQ(history.series.size(), 2u);
  EXPECT_EQ(history.series[0].labels, early);
  EXPECT_EQ(history.series[1].labels, late);
  for (std::size_t i = 0; i < 7; ++i) {
    const auto expected =
        static_cast<float>(generated(secondsOf(kT0) + 60.0 * static_cast<double>(i)));
    EXPECT_EQ(history.series[0].values[i], expected) << i;
    if (i < 3) {
      EXPECT_TRUE(std::isnan(history.series[1].values[i])) << i;
    } else {
      EXPECT_EQ(history.series[1].values[i], expected) << i;
    }
  }
}

// Builds one series' answer from (offset from kT0 in seconds, value) points.
prometheus::RangeResult pointsAt(const Labels& labels,
                                 const std::vector<std::pair<double, double>>& points) {
  prometheus::RangeResult result;
  prometheus::RangeSeries series;
  series.labels = labels;
  for (const auto& [offset, value] : points) {
    series.times.push_back(secondsOf(kT0) + offset);
    series.values.push_back(value);
  }
  result.series.push_back(std::move(series));
  return result;
}

TEST(FetchGridHistoryTest, MissingPointsAreNaNHoles) {
  testing::FakePrometheus fake;
  fake.range_answer = [](const testing::FakePrometheus::RangeCall&) {
    return pointsAt({{"pod", "a"}}, {{0, 1}, {120, 3}, {240, 5}});
  };
  const GridHistory history =
      fetchGridHistory(fake, "up", kT0, kT0 + minutes(5), seconds(60), milliseconds(1000));
  ASSERT_EQ(history.length, 6u);
  ASSERT_EQ(history.series.size(), 1u);
  const std::vector<float>& values = history.series[0].values;
  EXPECT_EQ(values[0], 1);
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_EQ(values[2], 3);
  EXPECT_TRUE(std::isnan(values[3]));
  EXPECT_EQ(values[4], 5);
  EXPECT_TRUE(std::isnan(values[5]));
}

TEST(FetchGridHistoryTest, PointsSnapToTheNearestGridPointWithinHalfAStep) {
  testing::FakePrometheus fake;
  fake.range_answer = [](const testing::FakePrometheus::RangeCall&) {
    return pointsAt({{"pod", "a"}}, {
                                        {-31, 90},     // before the first grid point by > step/2
                                        {-30, 91},     // by exactly step/2: ignored
                                        {-29, 10},     // snaps to 0
                                        {60.001, 11},  // a millisecond late: 1
                                        {140, 12},     // 20 s late: 2
                                        {170, 13},     // 10 s early: 3
                                        {329, 15},     // 29 s late for the last point: 5
                                        {330, 92},     // past the last grid point by step/2
                                        {1e300, 93},   // no grid point near
                                        {-1e300, 94},
                                    });
  };
  const GridHistory history =
      fetchGridHistory(fake, "up", kT0, kT0 + minutes(5), seconds(60), milliseconds(1000));
  ASSERT_EQ(history.series.size(), 1u);
  const std::vector<float>& values = history.series[0].values;
  ASSERT_EQ(values.size(), 6u);
  EXPECT_EQ(values[0], 10);
  EXPECT_EQ(values[1], 11);
  EXPECT_EQ(values[2], 12);
  EXPECT_EQ(values[3], 13);
  EXPECT_TRUE(std::isnan(values[4]));
  EXPECT_EQ(values[5], 15);
}

TEST(FetchGridHistoryTest, SpecialValuesHaveDefinedGridValues) {
  testing::FakePrometheus fake;
  fake.range_answer = [](const testing::FakePrometheus::RangeCall&) {
    return pointsAt({{"pod", "a"}}, {
                                        {0, std::numeric_limits<double>::quiet_NaN()},
                                        {60, std::numeric_limits<double>::infinity()},
                                        {120, -std::numeric_limits<double>::infinity()},
                                        {180, 1e300},                  // beyond float: +Inf
                                        {240, -1e300},                 // beyond float: -Inf
                                        {300, 9223372036854775794.0},  // DCGM's blank sentinel
                                    });
  };
  const GridHistory history =
      fetchGridHistory(fake, "up", kT0, kT0 + minutes(5), seconds(60), milliseconds(1000));
  ASSERT_EQ(history.series.size(), 1u);
  const std::vector<float>& values = history.series[0].values;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], inf);
  EXPECT_EQ(values[2], -inf);
  EXPECT_EQ(values[3], inf);
  EXPECT_EQ(values[4], -inf);
  EXPECT_EQ(values[5], 9223372036854775794.0f);
}

TEST(FetchGridHistoryTest, AFailedCallFailsTheFetch) {
  testing::FakePrometheus fake;
  fake.range_answer = [](const testing::FakePrometheus::RangeCall& call) {
    if (call.start != kT0) {
      throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kTimeout, 0,
                                        "Prometheus did not answer within 1s");
    }
    return prometheus::RangeResult{};
  };
  try {
    fetchGridHistory(fake, "up", kT0, kT0 + minutes(6), seconds(60), milliseconds(1000), 3);
    FAIL() << "no exception";
  } catch (const prometheus::PrometheusError& e) {
    EXPECT_EQ(e.kind(), prometheus::PrometheusError::Kind::kTimeout);
  }
  EXPECT_EQ(fake.range_calls.size(), 2u);  // stops at the first failure
}

TEST(FetchGridHistoryTest, AnEndBeforeTheStartFetchesNothing) {
  testing::FakePrometheus fake;
  const GridHistory history =
      fetchGridHistory(fake, "up", kT0, kT0 - seconds(1), seconds(60), milliseconds(1000));
  EXPECT_TRUE(fake.range_calls.empty());
  EXPECT_EQ(history.length, 0u);
  EXPECT_TRUE(history.series.empty());
  EXPECT_EQ(history.start, kT0);
}

}  // namespace
}  // namespace metrics_adapter::forecast::range_fetch_test
