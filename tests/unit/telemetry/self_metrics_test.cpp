#include "metrics_adapter/telemetry/self_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

namespace metrics_adapter::telemetry {
namespace {

using std::chrono::duration;
using Labels = std::map<std::string, std::string>;

// One sample line of the text format: name{label="value",...} value.
struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

std::optional<Sample> parseSample(const std::string& line) {
  if (line.empty() || line[0] == '#') return std::nullopt;
  Sample sample;
  std::size_t pos = line.find_first_of("{ ");
  if (pos == std::string::npos) return std::nullopt;
  sample.name = line.substr(0, pos);
  if (line[pos] == '{') {
    ++pos;
    while (pos < line.size() && line[pos] != '}') {
      std::size_t eq = line.find("=\"", pos);
      if (eq == std::string::npos) return std::nullopt;
      std::string key = line.substr(pos, eq - pos);
      std::size_t end = line.find('"', eq + 2);  // test values never hold quotes
      if (end == std::string::npos) return std::nullopt;
      sample.labels[key] = line.substr(eq + 2, end - eq - 2);
      pos = end + 1;
      if (pos < line.size() && line[pos] == ',') ++pos;
    }
    ++pos;
  }
  sample.value = std::stod(line.substr(pos));
  return sample;
}

// The value of the sample with exactly this name and these labels, if the exposition has it.
std::optional<double> valueOf(const std::string& exposition, const std::string& name,
                              const Labels& labels) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    auto sample = parseSample(line);
    if (sample && sample->name == name && sample->labels == labels) return sample->value;
  }
  return std::nullopt;
}

bool hasLine(const std::string& exposition, const std::string& wanted) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line == wanted) return true;
  }
  return false;
}

// Each test records into a SelfMetrics of its own: nothing is shared between tests.
class SelfMetricsTest : public ::testing::Test {
 protected:
  SelfMetrics& metrics() { return metrics_; }

 private:
  SelfMetrics metrics_;
};

TEST_F(SelfMetricsTest, RequestsAreCountedByRouteAndCodeAsACounter) {
  metrics().observeRequest("test_counted", 200, duration<double>(0.002));
  metrics().observeRequest("test_counted", 200, duration<double>(0.002));
  metrics().observeRequest("test_counted", 404, duration<double>(0.002));
  const std::string text = metrics().exposition();
  EXPECT_TRUE(hasLine(text, "# TYPE metrics_adapter_requests_total counter"));
  EXPECT_EQ(2.0, valueOf(text, "metrics_adapter_requests_total",
                         {{"route", "test_counted"}, {"code", "200"}}));
  EXPECT_EQ(1.0, valueOf(text, "metrics_adapter_requests_total",
                         {{"route", "test_counted"}, {"code", "404"}}));
}

TEST_F(SelfMetricsTest, RequestLatencyHistogramCountsEveryObservationInItsBuckets) {
  metrics().observeRequest("test_latency", 200, duration<double>(0.0005));
  metrics().observeRequest("test_latency", 500, duration<double>(0.3));
  metrics().observeRequest("test_latency", 200, duration<double>(20));
  const std::string text = metrics().exposition();
  const std::string name = "metrics_adapter_request_duration_seconds";
  EXPECT_TRUE(hasLine(text, "# TYPE " + name + " histogram"));
  // Buckets are cumulative: 0.5 ms is under 1 ms, 0.3 s under 0.5 s, 20 s only under +Inf.
  struct Case {
    std::string le;
    double count;
  };
  for (const Case& c :
       {Case{"0.001", 1}, Case{"0.25", 1}, Case{"0.5", 2}, Case{"10", 2}, Case{"+Inf", 3}}) {
    EXPECT_EQ(c.count, valueOf(text, name + "_bucket", {{"route", "test_latency"}, {"le", c.le}}))
        << "le=" << c.le;
  }
  EXPECT_EQ(3.0, valueOf(text, name + "_count", {{"route", "test_latency"}}));
  auto sum = valueOf(text, name + "_sum", {{"route", "test_latency"}});
  ASSERT_TRUE(sum.has_value());
  EXPECT_DOUBLE_EQ(20.3005, *sum);
}

TEST_F(SelfMetricsTest, InFlightGaugeFollowsStartsAndFinishes) {
  const auto before = valueOf(metrics().exposition(), "metrics_adapter_requests_in_flight", {});
  ASSERT_TRUE(before.has_value());
  metrics().requestStarted();
  metrics().requestStarted();
  metrics().requestFinished();
  const std::string text = metrics().exposition();
  EXPECT_TRUE(hasLine(text, "# TYPE metrics_adapter_requests_in_flight gauge"));
  EXPECT_EQ(*before + 1, valueOf(text, "metrics_adapter_requests_in_flight", {}));
  metrics().requestFinished();
}

TEST_F(SelfMetricsTest, PrometheusCallsAreCountedByEndpointAndOutcome) {
  metrics().observePrometheusCall("default", "test_query", "success", duration<double>(0.01));
  metrics().observePrometheusCall("default", "test_query", "timeout", duration<double>(5));
  metrics().observePrometheusCall("default", "test_query", "timeout", duration<double>(5));
  const std::string text = metrics().exposition();
  const std::string total = "metrics_adapter_prometheus_requests_total";
  EXPECT_EQ(1.0,
            valueOf(text, total,
                    {{"backend", "default"}, {"endpoint", "test_query"}, {"outcome", "success"}}));
  EXPECT_EQ(2.0,
            valueOf(text, total,
                    {{"backend", "default"}, {"endpoint", "test_query"}, {"outcome", "timeout"}}));
  EXPECT_EQ(3.0, valueOf(text, "metrics_adapter_prometheus_request_duration_seconds_count",
                         {{"backend", "default"}, {"endpoint", "test_query"}}));
  metrics().observePrometheusCall("thanos", "test_query", "success", duration<double>(0.01));
  EXPECT_EQ(1.0,
            valueOf(metrics().exposition(), total,
                    {{"backend", "thanos"}, {"endpoint", "test_query"}, {"outcome", "success"}}));
}

TEST_F(SelfMetricsTest, RelistRecordsDurationAndTheLastRunsFailures) {
  const std::string name = "metrics_adapter_relist_duration_seconds";
  const Labels gpu{{"backend", "gpu"}};
  metrics().observeRelist("gpu", duration<double>(0.2), 3);
  metrics().observeRelist("gpu", duration<double>(0.2), 1);
  metrics().observeRelist("apps", duration<double>(0.2), 2);
  const std::string text = metrics().exposition();
  EXPECT_EQ(2.0, valueOf(text, name + "_count", gpu));
  EXPECT_EQ(1.0, valueOf(text, "metrics_adapter_relist_failed_queries", gpu));  // a gauge: last run
  EXPECT_EQ(2.0, valueOf(text, "metrics_adapter_relist_failed_queries", {{"backend", "apps"}}));
  metrics().setBackendRelistSuccess(
      "gpu", std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
  EXPECT_EQ(1700000000.0,
            valueOf(metrics().exposition(),
                    "metrics_adapter_backend_last_successful_relist_timestamp_seconds", gpu));
  EXPECT_TRUE(hasLine(text, "# TYPE metrics_adapter_relist_failed_queries gauge"));
}

TEST_F(SelfMetricsTest, RuleGaugesHoldTheLatestValuesAndErrorsAccumulate) {
  metrics().setRuleDiscovery("rules[90]", 10, 4);
  metrics().setRuleDiscovery("rules[90]", 7, 2);
  metrics().setRuleDiscovery("externalRules[91]", 1, 1);
  metrics().countRuleError("rules[90]");
  metrics().countRuleError("rules[90]");
  const std::string text = metrics().exposition();
  EXPECT_EQ(7.0, valueOf(text, "metrics_adapter_rule_series", {{"rule", "rules[90]"}}));
  EXPECT_EQ(2.0, valueOf(text, "metrics_adapter_rule_metrics", {{"rule", "rules[90]"}}));
  EXPECT_EQ(1.0, valueOf(text, "metrics_adapter_rule_series", {{"rule", "externalRules[91]"}}));
  EXPECT_EQ(2.0, valueOf(text, "metrics_adapter_rule_errors_total", {{"rule", "rules[90]"}}));
  EXPECT_TRUE(hasLine(text, "# TYPE metrics_adapter_rule_errors_total counter"));
}

TEST_F(SelfMetricsTest, KeepRulesDropsTheGaugesOfRulesNoLongerConfigured) {
  metrics().setRuleDiscovery("rules[80]", 5, 5);
  metrics().setRuleDiscovery("rules[81]", 6, 6);
  metrics().keepRules({"rules[81]"});
  const std::string text = metrics().exposition();
  EXPECT_FALSE(valueOf(text, "metrics_adapter_rule_series", {{"rule", "rules[80]"}}));
  EXPECT_FALSE(valueOf(text, "metrics_adapter_rule_metrics", {{"rule", "rules[80]"}}));
  EXPECT_EQ(6.0, valueOf(text, "metrics_adapter_rule_series", {{"rule", "rules[81]"}}));
}

TEST_F(SelfMetricsTest, ObjectCacheAndReloadsCountByResult) {
  const std::string before = metrics().exposition();
  const std::string cache = "metrics_adapter_object_cache_requests_total";
  const std::string reloads = "metrics_adapter_config_reloads_total";
  const double hits = valueOf(before, cache, {{"result", "hit"}}).value_or(-1);
  const double misses = valueOf(before, cache, {{"result", "miss"}}).value_or(-1);
  const double successes = valueOf(before, reloads, {{"result", "success"}}).value_or(-1);
  const double failures = valueOf(before, reloads, {{"result", "failure"}}).value_or(-1);
  ASSERT_GE(std::min({hits, misses, successes, failures}), 0);  // present before any event
  metrics().countObjectCache(true);
  metrics().countObjectCache(true);
  metrics().countObjectCache(false);
  metrics().countConfigReload(false);
  metrics().countConfigReload(true);
  const std::string text = metrics().exposition();
  EXPECT_EQ(hits + 2, valueOf(text, cache, {{"result", "hit"}}));
  EXPECT_EQ(misses + 1, valueOf(text, cache, {{"result", "miss"}}));
  EXPECT_EQ(successes + 1, valueOf(text, reloads, {{"result", "success"}}));
  EXPECT_EQ(failures + 1, valueOf(text, reloads, {{"result", "failure"}}));
  // A Unix time stamp after 2020-01-01 proves it was set to the current time.
  EXPECT_GT(
      valueOf(text, "metrics_adapter_config_last_reload_success_timestamp_seconds", {}).value_or(0),
      1577836800.0);
}

TEST_F(SelfMetricsTest, ObjectListsAndWatchesCountByReason) {
  SelfMetrics own;  // a fresh instance: counts start at zero
  own.countObjectList("initial");
  own.countObjectList("gone");
  own.countObjectList("gone");
  own.countObjectWatch("closed");
  own.countObjectWatch("error");
  const std::string text = own.exposition();
  EXPECT_EQ(1.0, valueOf(text, "metrics_adapter_object_lists_total", {{"reason", "initial"}}));
  EXPECT_EQ(2.0, valueOf(text, "metrics_adapter_object_lists_total", {{"reason", "gone"}}));
  EXPECT_EQ(1.0, valueOf(text, "metrics_adapter_object_watches_total", {{"end", "closed"}}));
  EXPECT_EQ(1.0, valueOf(text, "metrics_adapter_object_watches_total", {{"end", "error"}}));
  EXPECT_FALSE(valueOf(text, "metrics_adapter_object_watches_total", {{"end", "gone"}}));
}

TEST_F(SelfMetricsTest, BuildInfoIsOneForTheCurrentVersionOnly) {
  metrics().setBuildInfo("0.0.1-test");
  metrics().setBuildInfo("0.0.2-test");
  const std::string text = metrics().exposition();
  EXPECT_EQ(1.0, valueOf(text, "metrics_adapter_build_info", {{"version", "0.0.2-test"}}));
  EXPECT_FALSE(valueOf(text, "metrics_adapter_build_info", {{"version", "0.0.1-test"}}));
  EXPECT_TRUE(hasLine(text, "# TYPE metrics_adapter_build_info gauge"));
}

// The readiness of a replica whose forecasts are not all selected (issue 44).
TEST_F(SelfMetricsTest, ForecastSelectionsPendingAndReadyBeforeThem) {
  metrics().setForecastSelectionsPending(12);
  metrics().countForecastReadyBeforeSelections();
  const std::string text = metrics().exposition();
  EXPECT_NE(text.find("\nmetrics_adapter_forecast_first_selections_pending 12\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nmetrics_adapter_forecast_ready_before_selections_total 1\n"),
            std::string::npos)
      << text;
  metrics().setForecastSelectionsPending(0);
  EXPECT_NE(metrics().exposition().find("\nmetrics_adapter_forecast_first_selections_pending 0\n"),
            std::string::npos);
}

TEST_F(SelfMetricsTest, EveryMetricHasHelpTypeAndTheAdapterPrefix) {
  // Families without samples are left out of the exposition, so record one of each first.
  metrics().observeRequest("test_all", 200, duration<double>(0.01));
  metrics().observePrometheusCall("default", "test_all", "success", duration<double>(0.01));
  metrics().observeRelist("default", duration<double>(0.01), 0);
  metrics().setBackendRelistSuccess("default", std::chrono::system_clock::now());
  metrics().setRuleDiscovery("rules[70]", 1, 1);
  metrics().countRuleError("rules[70]");
  metrics().setBuildInfo("0.0.3-test");
  metrics().countBadSamples(1);
  metrics().countAuditDropped("log", "buffer_full");
  const std::string text = metrics().exposition();
  std::istringstream in(text);
  std::string line;
  int families = 0;
  int helps = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      ++families;
      EXPECT_EQ(0u, line.rfind("# TYPE metrics_adapter_", 0)) << line;
    }
    if (line.rfind("# HELP metrics_adapter_", 0) == 0) ++helps;
  }
  // The fourteen metrics the issue lists, metrics_adapter_prometheus_bad_samples_total,
  // metrics_adapter_backend_last_successful_relist_timestamp_seconds, the two audit counters
  // (issue 27), and the forecast's first selections: pending, and Ready before them (issue 44).
  EXPECT_EQ(20, families);
  EXPECT_EQ(20, helps);
}

TEST_F(SelfMetricsTest, AuditEventsAreCountedByBackendAndLossesByReason) {
  for (int i = 0; i < 3; ++i) metrics().countAuditEvent("log");
  metrics().countAuditEvent("webhook");
  metrics().countAuditDropped("webhook", "send_error", 400);
  const std::string text = metrics().exposition();
  EXPECT_NE(text.find("metrics_adapter_audit_events_total{backend=\"log\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("metrics_adapter_audit_events_total{backend=\"webhook\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("metrics_adapter_audit_events_dropped_total{backend=\"webhook\",reason="
                      "\"send_error\"} 400\n"),
            std::string::npos)
      << text;
}

TEST(PrometheusTimeOnThisThreadTest, AddsUpPerThreadUntilReset) {
  PrometheusTimeOnThisThread::reset();
  PrometheusTimeOnThisThread::add(std::chrono::milliseconds(3));
  PrometheusTimeOnThisThread::add(std::chrono::milliseconds(4));
  std::thread other([] { PrometheusTimeOnThisThread::add(std::chrono::seconds(1)); });
  other.join();
  EXPECT_DOUBLE_EQ(PrometheusTimeOnThisThread::total().count(), 0.007);
  PrometheusTimeOnThisThread::reset();
  EXPECT_EQ(PrometheusTimeOnThisThread::total().count(), 0);
}

}  // namespace
}  // namespace metrics_adapter::telemetry
