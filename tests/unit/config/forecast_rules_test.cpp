#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "metrics_adapter/config/config.h"

namespace metrics_adapter::config {
namespace {

using std::chrono::hours;
using std::chrono::seconds;
using ::testing::ElementsAre;

std::string forecastErrorOf(const std::string& yaml) {
  try {
    parseConfig(yaml, "forecast.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ForecastRulesTest, ReadsEveryField) {
  const AdapterConfig config = parseConfig(R"(forecastRules:
- name: bert_gpu_forecast
  query: 'sum(nvidia_gpu_duty_cycle{namespace_name="default"})'
  namespaces: [default, inference]
  history: 14d
  step: 30s
  horizon: 15m
  refreshInterval: 2m
  quantile: 0.9
)",
                                           "forecast.yaml");
  ASSERT_EQ(config.forecast_rules.size(), 1u);
  const ForecastRule& rule = config.forecast_rules[0];
  EXPECT_EQ(rule.name, "bert_gpu_forecast");
  EXPECT_EQ(rule.query, R"(sum(nvidia_gpu_duty_cycle{namespace_name="default"}))");
  EXPECT_THAT(rule.namespaces, ElementsAre("default", "inference"));
  EXPECT_EQ(rule.history, hours(24 * 14));
  EXPECT_EQ(rule.step, seconds(30));
  EXPECT_EQ(rule.horizon, seconds(15 * 60));
  EXPECT_EQ(rule.refresh_interval, seconds(120));
  EXPECT_DOUBLE_EQ(rule.quantile, 0.9);
}

TEST(ForecastRulesTest, DefaultsAreSevenDaysOfMinutesTenMinutesAhead) {
  const AdapterConfig config =
      parseConfig("forecastRules:\n- name: demand\n  query: sum(up)\n", "forecast.yaml");
  ASSERT_EQ(config.forecast_rules.size(), 1u);
  const ForecastRule& rule = config.forecast_rules[0];
  EXPECT_TRUE(rule.namespaces.empty());
  EXPECT_EQ(rule.history, hours(24 * 7));
  EXPECT_EQ(rule.step, seconds(60));
  EXPECT_EQ(rule.horizon, seconds(600));
  EXPECT_EQ(rule.refresh_interval, seconds(60));
  EXPECT_DOUBLE_EQ(rule.quantile, 0.5);
}

// Every error names the file, the rule and the field (and the line).
TEST(ForecastRulesTest, ErrorsNameFileRuleAndField) {
  struct Case {
    const char* yaml;
    const char* expected;
  };
  const Case cases[] = {
      {"forecastRules:\n- query: sum(up)\n", "forecast.yaml: forecastRules[0].name: required"},
      {"forecastRules:\n- name: d\n", "forecast.yaml: forecastRules[0].query: required"},
      {"forecastRules:\n- name: a/b\n  query: x\n",
       "forecast.yaml: forecastRules[0].name: \"a/b\" is not a metric name"},
      {"forecastRules:\n- name: d\n  query: x\n  step: 1x\n",
       "forecast.yaml: forecastRules[0].step: not a valid duration string: \"1x\" (line 4)"},
      {"forecastRules:\n- name: d\n  query: x\n  step: 1500ms\n",
       "forecast.yaml: forecastRules[0].step: must be whole seconds (line 4)"},
      {"forecastRules:\n- name: d\n  query: x\n  history: 1d\n",
       "forecast.yaml: forecastRules[0].history: must be at least 48h"},
      {"forecastRules:\n- name: d\n  query: x\n  history: 30d\n  step: 10s\n",
       "forecast.yaml: forecastRules[0].history: holds more than 100000 steps"},
      {"forecastRules:\n- name: d\n  query: x\n  horizon: 30s\n",
       "forecast.yaml: forecastRules[0].horizon: must be at least one step"},
      {"forecastRules:\n- name: d\n  query: x\n  refreshInterval: 0\n",
       "forecast.yaml: forecastRules[0].refreshInterval: must be at least 1s"},
      {"forecastRules:\n- name: d\n  query: x\n  quantile: 0.3\n",
       "forecast.yaml: forecastRules[0].quantile: must be a number from 0.5"},
      {"forecastRules:\n- name: d\n  query: x\n  quantile: high\n",
       "forecast.yaml: forecastRules[0].quantile: must be a number from 0.5"},
      {"forecastRules:\n- name: d\n  query: x\n  namespaces: [Default]\n",
       "forecast.yaml: forecastRules[0].namespaces[0]: \"Default\" is not a namespace name"},
      {"forecastRules:\n- name: d\n  query: x\n- name: d\n  query: y\n",
       "forecast.yaml: forecastRules[1].name: \"d\" is already the name of forecastRules[0]"},
      {"forecastRules:\n- name: d\n  query: x\n  model: fancy\n",
       "forecast.yaml: forecastRules[0].model: unknown field"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    EXPECT_THAT(forecastErrorOf(c.yaml), ::testing::StartsWith(c.expected));
  }
}

// prometheus-adapter's own sections still load beside forecastRules.
TEST(ForecastRulesTest, LivesBesideUpstreamSections) {
  const AdapterConfig config = parseConfig(R"(rules:
- seriesQuery: 'up'
  metricsQuery: 'up'
externalRules:
- seriesQuery: 'queue_depth'
  metricsQuery: 'sum(queue_depth)'
forecastRules:
- name: demand_forecast
  query: sum(queue_depth)
)",
                                           "forecast.yaml");
  EXPECT_EQ(config.rules.size(), 1u);
  EXPECT_EQ(config.external_rules.size(), 1u);
  EXPECT_EQ(config.forecast_rules.size(), 1u);
}

}  // namespace
}  // namespace metrics_adapter::config
