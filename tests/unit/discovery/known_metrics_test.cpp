#include "metrics_adapter/discovery/known_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/relister.h"
#include "unit/fake_prometheus.h"

namespace metrics_adapter::discovery {
namespace {

using std::chrono::system_clock;

TEST(DeclaredSeriesNamesTest, ReadsTheNamesAQuerySelectsByNameAlone) {
  struct Case {
    std::string query;
    std::vector<std::string> names;
  };
  const std::vector<Case> cases = {
      {"vllm:num_requests_waiting", {"vllm:num_requests_waiting"}},
      {" up{job=\"x\"} ", {"up"}},
      {R"({__name__="vllm:num_requests_waiting",namespace!=""})", {"vllm:num_requests_waiting"}},
      {R"({namespace!="", __name__ = 'a_b'})", {"a_b"}},
      {R"({__name__=~"inference_extension_flow_control_queue_size|llm_d_epp_flow_control_queue_size",namespace!=""})",
       {"inference_extension_flow_control_queue_size", "llm_d_epp_flow_control_queue_size"}},
      {R"({__name__=~"^(a|b)$"})", {"a", "b"}},
      // Patterns, exclusions, escapes and broken queries name nothing.
      {R"({__name__=~"^DCGM_.*"})", {}},
      {R"q({__name__=~"vllm:num_requests_(waiting|running)"})q", {}},
      {R"({__name__!="x"})", {}},
      {R"({__name__="a\"b"})", {}},
      {R"({namespace!=""})", {}},
      {"rate(x[5m])", {}},
      {"x{", {}},
      {R"({__name__="x)", {}},
      {"", {}},
  };
  for (const auto& c : cases) EXPECT_EQ(declaredSeriesNames(c.query), c.names) << c.query;
}

// A rule that names each series s_<x> x, as findings() below names them.
struct SeriesRule {
  kube::RestMapper mapper = kube::RestMapper::builtin();
  std::shared_ptr<const CompiledRule> rule = compileRules(config::parseConfig(R"(
externalRules:
- seriesQuery: '{__name__=~"^s_.*"}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name: {matches: "^s_(.*)$"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
)",
                                                                              "r.yaml"),
                                                          mapper, nullptr)
                                                 .at(0);
};

std::shared_ptr<const RuleFindings> findings(std::vector<std::string> names,
                                             system_clock::time_point at) {
  auto result = std::make_shared<RuleFindings>();
  for (const auto& name : names) result->metrics[name] = {.series_name = "s_" + name};
  result->found_at = at;
  return result;
}

TEST(KeepGoneMetricsTest, AMetricTheLastRelistMissedStaysWithWhenItWasFound) {
  const auto t1 = system_clock::time_point(std::chrono::hours(1));
  const auto t2 = t1 + std::chrono::minutes(1);
  const auto t3 = t2 + std::chrono::minutes(1);
  const SeriesRule named;
  const CompiledRule& rule = *named.rule;
  auto first = findings({"a", "b"}, t1);
  auto second = keepGoneMetrics(rule, first, findings({"a"}, t2));
  ASSERT_EQ(second->metrics.size(), 2u);
  EXPECT_FALSE(second->metrics.at("a").gone);
  const auto& b = second->metrics.at("b");
  EXPECT_TRUE(b.gone);
  EXPECT_EQ(b.last_found, t1);
  EXPECT_EQ(b.series_name, "s_b");
  // Still gone a relist later: it keeps the time its series were last found, not t2.
  auto third = keepGoneMetrics(rule, second, findings({"a"}, t3));
  EXPECT_EQ(third->metrics.at("b").last_found, t1);
  // Back again: an ordinary metric.
  auto fourth = keepGoneMetrics(rule, third, findings({"a", "b"}, t3));
  EXPECT_FALSE(fourth->metrics.at("b").gone);
  EXPECT_FALSE(fourth->metrics.at("b").last_found);
}

TEST(KeepGoneMetricsTest, NothingGoneIsTheFreshFindingsThemselves) {
  const SeriesRule named;
  auto fresh = findings({"a"}, system_clock::time_point{});
  EXPECT_EQ(keepGoneMetrics(*named.rule, nullptr, fresh), fresh);
  EXPECT_EQ(keepGoneMetrics(*named.rule, findings({"a"}, system_clock::time_point{}), fresh),
            fresh);
}

// A reload that renames a metric keeps the rule (same seriesQuery) and its last findings: the
// old name is no longer the rule's, so it is not kept as gone.
TEST(KeepGoneMetricsTest, ANameTheRuleNoLongerGivesIsNotKept) {
  const SeriesRule named;
  auto previous = findings({"a"}, system_clock::time_point{});
  auto renamed = std::make_shared<RuleFindings>(*previous);
  renamed->metrics["old_a"] = renamed->metrics.at("a");  // what a former name.as made of s_a
  auto fresh = findings({}, system_clock::time_point{});
  auto kept = keepGoneMetrics(*named.rule, renamed, fresh);
  EXPECT_EQ(kept->metrics.size(), 1u);
  EXPECT_TRUE(kept->metrics.at("a").gone);
}

TEST(KeepGoneMetricsTest, KeepsAtMostTheBoundMostRecentlyFound) {
  auto previous = std::make_shared<RuleFindings>();
  for (std::size_t i = 0; i < kMaxGoneMetrics + 3; ++i) {
    previous->metrics["m" + std::to_string(i)] = {
        .series_name = "s_m" + std::to_string(i),
        .gone = true,
        .last_found = system_clock::time_point(std::chrono::seconds(i))};
  }
  const SeriesRule named;
  auto merged = keepGoneMetrics(*named.rule, previous, findings({}, system_clock::time_point{}));
  EXPECT_EQ(merged->metrics.size(), kMaxGoneMetrics);
  EXPECT_FALSE(merged->metrics.contains("m0"));  // the three found longest ago
  EXPECT_FALSE(merged->metrics.contains("m2"));
  EXPECT_TRUE(merged->metrics.contains("m3"));
}

constexpr const char* kScaleToZeroRules = R"(
externalRules:
- seriesQuery: '{__name__="vllm:num_requests_waiting",namespace!=""}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name: {matches: "^vllm:(.*)$", as: "vllm_${1}_sum"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
- seriesQuery: '{__name__=~"^queue_.*"}'
  resources: {overrides: {namespace: {resource: namespace}}}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
rules:
- seriesQuery: '{__name__=~"^gpu_.*"}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
)";

class KnownMetricsRelistTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prometheus_ = std::make_shared<testing::FakePrometheus>();
    auto set = std::make_shared<RuleSet>();
    set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
    set->backends = prometheus::BackendSet::single(prometheus_);
    set->rules =
        compileRules(config::parseConfig(kScaleToZeroRules, "r.yaml"), *set->mapper, nullptr);
    rule_set_ = set;
  }
  void serve(bool with_series) {
    prometheus_->series_by_selector[R"({__name__=~"^queue_.*"})"] =
        with_series ? std::vector<testing::FakePrometheus::Series>{{"queue_depth", {"namespace"}}}
                    : std::vector<testing::FakePrometheus::Series>{};
    prometheus_->series_by_selector[R"({__name__=~"^gpu_.*"})"] =
        with_series
            ? std::vector<testing::FakePrometheus::Series>{{"gpu_util", {"namespace", "pod"}}}
            : std::vector<testing::FakePrometheus::Series>{};
  }
  std::shared_ptr<testing::FakePrometheus> prometheus_;
  std::shared_ptr<const RuleSet> rule_set_;
};

TEST_F(KnownMetricsRelistTest, ARuleNamingItsSeriesDefinesItsMetricBeforeAnySeries) {
  serve(false);
  Relister relister(rule_set_, RelistOptions{});
  // Before the first relist too: the config alone names it.
  const ExternalMetric* declared =
      relister.snapshot()->findExternal("vllm_num_requests_waiting_sum");
  ASSERT_TRUE(declared);
  EXPECT_EQ(declared->presence, MetricPresence::kDeclared);
  EXPECT_EQ(declared->series_name, "vllm:num_requests_waiting");
  EXPECT_EQ(declared->rule->id, "externalRules[0]");
  relister.relistOnce();
  EXPECT_TRUE(relister.snapshot()->findExternal("vllm_num_requests_waiting_sum"));
  EXPECT_FALSE(relister.snapshot()->findExternal("queue_depth"));  // a pattern names nothing
}

TEST_F(KnownMetricsRelistTest, MetricsWhoseSeriesAreGoneStayServedAsGone) {
  serve(true);
  Relister relister(rule_set_, RelistOptions{});
  relister.relistOnce();
  std::size_t queue_rule = 0;
  while (rule_set_->rules.at(queue_rule)->id != "externalRules[1]") ++queue_rule;
  const auto found_at = relister.findings().at(queue_rule)->found_at;
  ASSERT_EQ(relister.snapshot()->findExternal("queue_depth")->presence, MetricPresence::kSeries);
  serve(false);
  relister.relistOnce();
  auto snapshot = relister.snapshot();
  const ExternalMetric* queue = snapshot->findExternal("queue_depth");
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->presence, MetricPresence::kGone);
  EXPECT_EQ(queue->last_found, found_at);
  const CustomMetric* gpu = snapshot->findCustom("pods", "gpu_util");
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->presence, MetricPresence::kGone);
  EXPECT_EQ(gpu->series_name, "gpu_util");
  serve(true);
  relister.relistOnce();
  EXPECT_EQ(relister.snapshot()->findExternal("queue_depth")->presence, MetricPresence::kSeries);
}

}  // namespace
}  // namespace metrics_adapter::discovery
