#include "metrics_adapter/api/forecast_routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "unit/fake_prometheus.h"

namespace metrics_adapter::api {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

const forecast::Clock::time_point kForecastNow(seconds(1'790'000'017));

// Two flat workloads: the forecast of a flat demand is that demand.
prometheus::RangeResult flatDemand(const testing::FakePrometheus::RangeCall& call) {
  prometheus::RangeResult result;
  for (const auto& [workload, level] : {std::pair{"a", 40.0}, std::pair{"b", 7.5}}) {
    prometheus::RangeSeries series;
    series.labels = {{"__name__", "demand"}, {"workload", workload}};
    for (auto t = call.start; t <= call.end; t += call.step) {
      series.times.push_back(std::chrono::duration<double>(t.time_since_epoch()).count());
      series.values.push_back(level);
    }
    result.series.push_back(std::move(series));
  }
  return result;
}

config::ForecastRule flatRule() {
  config::ForecastRule rule;
  rule.name = "demand_forecast";
  rule.query = "demand";
  rule.namespaces = {"default"};
  return rule;
}

class ForecastRoutesTest : public ::testing::Test {
 protected:
  void refresh(forecast::Clock::time_point at) { service_.refresh({flatRule()}, at); }

  Json list(const std::string& selector = "", const std::string& ns = "default",
            forecast::Clock::time_point at = kForecastNow) {
    ExternalMetricRequest request{
        .namespace_name = ns, .metric = "demand_forecast", .label_selector = selector};
    auto answer = forecastMetricValueList(service_, request, at);
    if (!answer) throw std::logic_error("not a forecast");
    return *answer;
  }

  int errorCode(const std::function<void()>& call) {
    try {
      call();
    } catch (const ApiError& e) {
      last_message_ = e.what();
      return e.code();
    }
    return 200;
  }

  std::shared_ptr<testing::FakePrometheus> prometheus_ =
      std::make_shared<testing::FakePrometheus>();
  forecast::ForecastService service_{testing::onlyBackend(prometheus_),
                                     forecast::ForecastServiceOptions{}};
  std::string last_message_;
};

TEST_F(ForecastRoutesTest, ServesOneItemPerSeriesWithItsLabels) {
  prometheus_->range_answer = flatDemand;
  refresh(kForecastNow);
  const Json answer = list();
  EXPECT_EQ(answer["kind"], "ExternalMetricValueList");
  ASSERT_EQ(answer["items"].size(), 2u);
  EXPECT_EQ(answer["items"][0]["metricName"], "demand_forecast");
  EXPECT_EQ(answer["items"][0]["metricLabels"], Json({{"workload", "a"}}));
  EXPECT_EQ(answer["items"][0]["value"], "40");
  EXPECT_EQ(answer["items"][1]["value"], "7500m");
  // The answer's time (kForecastNow, 1790000017), not the step the window starts at: the window
  // served is [now, now + horizon] (issue 35).
  EXPECT_EQ(answer["items"][0]["timestamp"], "2026-09-21T14:13:37Z");
}

TEST_F(ForecastRoutesTest, LabelSelectorPicksSeries) {
  prometheus_->range_answer = flatDemand;
  refresh(kForecastNow);
  EXPECT_EQ(list("workload=b")["items"].size(), 1u);
  EXPECT_EQ(list("workload notin (a,b)")["items"].size(), 0u);
  EXPECT_EQ(errorCode([&] { list("workload in ("); }), 400);
}

TEST_F(ForecastRoutesTest, OtherNamesAreNotForecasts) {
  ExternalMetricRequest request{.namespace_name = "default", .metric = "queue_depth"};
  EXPECT_FALSE(forecastMetricValueList(service_, request, kForecastNow).has_value());
}

TEST_F(ForecastRoutesTest, OnlyTheRulesNamespaces) {
  prometheus_->range_answer = flatDemand;
  refresh(kForecastNow);
  EXPECT_EQ(errorCode([&] { list("", "other"); }), 404);
  EXPECT_THAT(last_message_, HasSubstr("not served in namespace other"));
}

TEST_F(ForecastRoutesTest, UnavailableBeforeTheFirstFetch) {
  prometheus_->range_answer =
      [](const testing::FakePrometheus::RangeCall&) -> prometheus::RangeResult {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                      "connection refused");
  };
  refresh(kForecastNow);
  EXPECT_EQ(errorCode([&] { list(); }), 503);
  EXPECT_THAT(last_message_, HasSubstr("not ready"));
  EXPECT_THAT(last_message_, HasSubstr("connection refused"));
}

TEST_F(ForecastRoutesTest, StaleAfterThreeIntervalsOfFailures) {
  prometheus_->range_answer = flatDemand;
  refresh(kForecastNow);
  prometheus_->range_answer =
      [](const testing::FakePrometheus::RangeCall&) -> prometheus::RangeResult {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                      "connection refused");
  };
  refresh(kForecastNow + minutes(1));
  EXPECT_EQ(list("", "default", kForecastNow + minutes(2))["items"].size(), 2u);
  EXPECT_EQ(errorCode([&] { list("", "default", kForecastNow + minutes(3) + seconds(1)); }), 503);
  EXPECT_THAT(last_message_, HasSubstr("stale"));
}

}  // namespace
}  // namespace metrics_adapter::api
