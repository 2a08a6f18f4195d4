#include "metrics_adapter/api/external_metrics_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "metrics_adapter/api/discovery_documents.h"
#include "metrics_adapter/api/query_builder.h"
#include "metrics_adapter/api/router.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/promql/label_matchers.h"
#include "unit/api/route_request.h"
#include "unit/fake_prometheus.h"

namespace metrics_adapter::api {
namespace {

using testing::FakePrometheus;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::sample;

// One rule per way an external rule finds (or lacks) the namespace label
// (docs/api-contract.md "prometheus-adapter: external metrics rendering").
constexpr const char* kExternalRules = R"(
externalRules:
- seriesQuery: '{__name__="queue_messages_ready"}'
  resources:
    overrides:
      namespace: {resource: namespace}
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
- seriesQuery: '{__name__="queue_messages_ready"}'
  resources:
    namespaced: false
  name:
    matches: ^queue_messages_ready$
    as: queue_messages_ready_anywhere
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
- seriesQuery: '{__name__="kube_queue_depth"}'
  resources:
    template: kube_<<.Resource>>
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
- seriesQuery: '{__name__="orphan_depth"}'
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
- seriesQuery: '{__name__="templated_depth"}'
  resources:
    overrides:
      ns: {resource: namespace}
  metricsQuery: 'sum(<<.Series>>{queue="<<index .LabelValuesByName "queue">>",ns="<<index .LabelValuesByName "ns">>"}) by (<<.GroupBy>>) <<.GroupBySlice>>'
)";

struct ExternalFixture {
  ExternalFixture() {
    prometheus = std::make_shared<FakePrometheus>();
    prometheus->series_by_selector["{__name__=\"queue_messages_ready\"}"] = {
        {"queue_messages_ready", {"queue", "vhost", "namespace"}}};
    prometheus->series_by_selector["{__name__=\"kube_queue_depth\"}"] = {
        {"kube_queue_depth", {"queue", "kube_namespace"}}};
    prometheus->series_by_selector["{__name__=\"orphan_depth\"}"] = {{"orphan_depth", {"queue"}}};
    prometheus->series_by_selector["{__name__=\"templated_depth\"}"] = {
        {"templated_depth", {"queue", "ns"}}};
    auto config = config::parseConfig(kExternalRules, "external.yaml");
    auto rule_set = std::make_shared<discovery::RuleSet>();
    rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
    rule_set->backends = prometheus::BackendSet::single(prometheus);
    rule_set->rules = discovery::compileRules(config, *rule_set->mapper, &warnings);
    relister = std::make_shared<discovery::Relister>(rule_set, discovery::RelistOptions{});
    relister->relistOnce();
    handler = std::make_shared<const ExternalMetricsHandler>(
        [relister = relister] { return relister->snapshot(); }, ExternalMetricsOptions{});
  }

  // The PromQL the handler sends for `metric` with `selector` in namespace "default".
  std::string queryFor(const std::string& metric, const std::string& selector) {
    handler->handle({.namespace_name = "default", .metric = metric, .label_selector = selector});
    return prometheus->queries.empty() ? "" : prometheus->queries.back();
  }

  std::shared_ptr<FakePrometheus> prometheus;
  std::vector<std::string> warnings;
  std::shared_ptr<discovery::Relister> relister;
  std::shared_ptr<const ExternalMetricsHandler> handler;
};

// Status code and message of handling `request`; 200 when it succeeds.
std::pair<int, std::string> outcome(const ExternalMetricsHandler& handler,
                                    const ExternalMetricRequest& request) {
  try {
    handler.handle(request);
  } catch (const ApiError& error) {
    return {error.code(), error.what()};
  }
  return {200, ""};
}

// Selector -> .LabelMatchers for a namespaced and a non-namespaced rule, operator × number of
// values (docs/api-contract.md "prometheus-adapter: selector to PromQL" and "prometheus-adapter:
// external metrics rendering"; in/notin values regex-escaped per "Decisions: better on purpose").
struct SelectorCase {
  std::string selector;
  std::string namespaced;      // queue_messages_ready, namespace label "namespace"
  std::string not_namespaced;  // queue_messages_ready_anywhere, resources.namespaced: false
};

void PrintTo(const SelectorCase& c, std::ostream* os) {
  *os << ::testing::PrintToString(c.selector);
}

class ExternalSelectorTest : public ::testing::TestWithParam<SelectorCase> {};

TEST_P(ExternalSelectorTest, RendersExactPromql) {
  ExternalFixture fixture;
  const SelectorCase& c = GetParam();
  EXPECT_EQ(fixture.queryFor("queue_messages_ready", c.selector),
            "queue_messages_ready{" + c.namespaced + "}");
  EXPECT_EQ(fixture.queryFor("queue_messages_ready_anywhere", c.selector),
            "queue_messages_ready{" + c.not_namespaced + "}");
}

INSTANTIATE_TEST_SUITE_P(
    OperatorsAndValues, ExternalSelectorTest,
    ::testing::Values(
        SelectorCase{"", R"(namespace="default")", ""},
        SelectorCase{"queue=orders", R"(queue="orders",namespace="default")", R"(queue="orders")"},
        SelectorCase{"queue==orders", R"(queue="orders",namespace="default")", R"(queue="orders")"},
        SelectorCase{"queue!=orders", R"(queue!="orders",namespace="default")",
                     R"(queue!="orders")"},
        SelectorCase{"queue in (orders)", R"(queue=~"orders",namespace="default")",
                     R"(queue=~"orders")"},
        SelectorCase{"queue in (orders,billing)", R"(queue=~"billing|orders",namespace="default")",
                     R"(queue=~"billing|orders")"},
        SelectorCase{"queue in ()", R"(queue=~"",namespace="default")", R"(queue=~"")"},
        SelectorCase{"queue notin (orders)", R"(queue!~"orders",namespace="default")",
                     R"(queue!~"orders")"},
        SelectorCase{"queue notin (orders,billing)",
                     R"(queue!~"billing|orders",namespace="default")",
                     R"(queue!~"billing|orders")"},
        SelectorCase{"queue", R"(queue!="",namespace="default")", R"(queue!="")"},
        SelectorCase{"!queue", R"(queue="",namespace="default")", R"(queue="")"},
        // Requirements sorted by key; `.` stays literal: exact for =, escaped for in.
        SelectorCase{"vhost=a.b,queue in (c,a.b)",
                     R"(queue=~"a\\.b|c",vhost="a.b",namespace="default")",
                     R"(queue=~"a\\.b|c",vhost="a.b")"},
        // namespaced: false lets the selector pick another namespace; a namespaced rule keeps
        // the request's namespace too (upstream).
        SelectorCase{"namespace=other", R"(namespace="other",namespace="default")",
                     R"(namespace="other")"}));

TEST(ExternalQueryTest, NamespaceLabelFromTheTemplate) {
  ExternalFixture fixture;
  EXPECT_EQ(fixture.queryFor("kube_queue_depth", "queue=a"),
            R"(sum(kube_queue_depth{queue="a",kube_namespace="default"}))");
}

TEST(ExternalQueryTest, TemplateFieldsAsUpstream) {
  ExternalFixture fixture;
  // .LabelValuesByName: selector values joined with '|', the namespace label -> namespace;
  // .GroupBy "" and .GroupBySlice [] (docs/api-contract.md "prometheus-adapter: label matchers").
  EXPECT_EQ(fixture.queryFor("templated_depth", "queue in (b,a)"),
            R"(sum(templated_depth{queue="a|b",ns="default"}) by () [])");
}

// Values a valid Kubernetes selector cannot carry, built by hand: each one is quoted (and
// regex-escaped for in/notin) so it matches itself only and cannot end the selector.
TEST(ExternalQueryTest, HostileRawValuesStayInsideTheirMatcher) {
  ExternalFixture fixture;
  const auto snapshot = fixture.relister->snapshot();
  const discovery::ExternalMetric* metric = snapshot->findExternal("queue_messages_ready");
  ASSERT_NE(metric, nullptr);
  struct Case {
    promql::Requirement requirement;
    std::string matchers;
  };
  using Op = promql::SelectorOperator;
  const std::vector<Case> cases = {
      {{"queue", Op::kEquals, {"a\"b"}}, R"(queue="a\"b")"},
      {{"queue", Op::kEquals, {"\"} or vector(1) #"}}, R"(queue="\"} or vector(1) #")"},
      {{"queue", Op::kEquals, {"a\\b"}}, R"(queue="a\\b")"},
      {{"queue", Op::kNotEquals, {"a\nb"}}, R"(queue!="a\nb")"},
      {{"queue", Op::kEquals, {".*"}}, R"(queue=".*")"},
      {{"queue", Op::kIn, {".*"}}, R"(queue=~"\\.\\*")"},
      {{"queue", Op::kIn, {"a|b", "c"}}, R"(queue=~"a\\|b|c")"},
      {{"queue", Op::kNotIn, {"(x)", "[y]"}}, R"(queue!~"\\(x\\)|\\[y\\]")"},
      {{"queue", Op::kIn, {"a\"\\\n"}}, R"(queue=~"a\"\\\\\n")"},
  };
  for (const Case& c : cases) {
    ExternalQuerySpec spec;
    spec.rule = metric->rule.get();
    spec.series = metric->series_name;
    spec.namespace_name = "default";
    spec.selector.requirements = {c.requirement};
    EXPECT_EQ(buildExternalQuery(spec, snapshot->mapper()),
              "queue_messages_ready{" + c.matchers + ",namespace=\"default\"}");
    // What Prometheus matches against: a regex value matches each literal value, nothing else.
    const promql::LabelMatcher matcher = promql::selectorToMatchers(spec.selector).front();
    if (matcher.op == promql::MatchOperator::kRegexMatch ||
        matcher.op == promql::MatchOperator::kRegexNoMatch) {
      const RE2 pattern(matcher.value);
      ASSERT_TRUE(pattern.ok()) << matcher.value;
      for (const auto& value : c.requirement.values) {
        EXPECT_TRUE(RE2::FullMatch(value, pattern)) << value;
        EXPECT_FALSE(RE2::FullMatch(value + "x", pattern)) << value;
      }
      EXPECT_FALSE(RE2::FullMatch("orders", pattern));
    }
  }
  // The same characters through the HTTP parameter are refused by the selector parser.
  const std::size_t queries_before = fixture.prometheus->queries.size();
  for (const char* selector :
       {"queue=a\"b", "queue=a\\b", "queue=a\nb", "queue in (.*)", "queue=a|b", "queue=\"}",
        "queue=x\"} or vector(1) #", "queue in (a,b\")"}) {
    auto [code, message] = outcome(*fixture.handler, {.namespace_name = "default",
                                                      .metric = "queue_messages_ready",
                                                      .label_selector = selector});
    EXPECT_EQ(code, 400) << selector;
    EXPECT_THAT(message, HasSubstr("invalid labelSelector")) << selector;
  }
  EXPECT_EQ(fixture.prometheus->queries.size(), queries_before);
}

TEST(ExternalQueryTest, SelectorErrorsAre400WithoutAQuery) {
  ExternalFixture fixture;
  struct Case {
    const char* selector;
    const char* message;
  };
  for (const Case& c :
       {Case{"queue>5", "operator not supported by prometheus"},
        Case{"queue<5", "operator not supported by prometheus"},
        Case{"app.kubernetes.io/name=x", "is not a Prometheus label name"},
        Case{"queue-name=x", "is not a Prometheus label name"},
        Case{"queue in (a", "invalid labelSelector"}, Case{"==", "invalid labelSelector"}}) {
    auto [code, message] = outcome(*fixture.handler, {.namespace_name = "default",
                                                      .metric = "queue_messages_ready",
                                                      .label_selector = c.selector});
    EXPECT_EQ(code, 400) << c.selector;
    EXPECT_THAT(message, HasSubstr(c.message)) << c.selector;
    EXPECT_THAT(message, HasSubstr("labelSelector")) << c.selector;
  }
  EXPECT_THAT(fixture.prometheus->queries, IsEmpty());
}

TEST(ExternalMetricsHandlerTest, OneItemPerSampleWithAllItsLabels) {
  ExternalFixture fixture;
  fixture.prometheus->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {
        sample({{"__name__", "queue_messages_ready"}, {"queue", "orders"}, {"vhost", "/"}}, 30),
        sample({{"__name__", "queue_messages_ready"}, {"queue", "billing"}, {"vhost", "/"}}, 0.5,
               1714564801.9)};
    return result;
  };
  Json list = fixture.handler->handle(
      {.namespace_name = "default", .metric = "queue_messages_ready", .label_selector = ""});
  // Conformance C38, with the sample's labels as Prometheus returned them (upstream keeps
  // __name__) and the sample's own timestamp.
  Json expected = Json::parse(R"({
    "kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1",
    "metadata": {}, "items": [
      {"metricName": "queue_messages_ready",
       "metricLabels": {"__name__": "queue_messages_ready", "queue": "billing", "vhost": "/"},
       "timestamp": "2024-05-01T12:00:01Z", "value": "500m"},
      {"metricName": "queue_messages_ready",
       "metricLabels": {"__name__": "queue_messages_ready", "queue": "orders", "vhost": "/"},
       "timestamp": "2024-05-01T12:00:00Z", "value": "30"}]})");
  EXPECT_EQ(list, expected);
  EXPECT_EQ(list.dump().find("\"window\""), std::string::npos);
}

TEST(ExternalMetricsHandlerTest, UnusableValuesAreSkippedAndLabelsAreNeverNull) {
  ExternalFixture fixture;
  fixture.prometheus->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {sample({{"queue", "nan"}}, std::nan("")),
                      sample({{"queue", "inf"}}, std::numeric_limits<double>::infinity()),
                      sample({{"queue", "-inf"}}, -std::numeric_limits<double>::infinity()),
                      sample({{"queue", "dcgm-blank"}}, 9223372036854775794.0), sample({}, 1.25)};
    return result;
  };
  Json list = fixture.handler->handle({.namespace_name = "default",
                                       .metric = "queue_messages_ready_anywhere",
                                       .label_selector = ""});
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_TRUE(list["items"][0]["metricLabels"].is_object());
  EXPECT_TRUE(list["items"][0]["metricLabels"].empty());
  EXPECT_EQ(list["items"][0]["value"], "1250m");
}

TEST(ExternalMetricsHandlerTest, ScalarIsOneItemWithoutLabels) {
  ExternalFixture fixture;
  fixture.prometheus->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.type = prometheus::QueryResult::Type::kScalar;
    result.samples = {sample({}, 42, 1714564802)};
    return result;
  };
  Json list = fixture.handler->handle({.namespace_name = "default",
                                       .metric = "queue_messages_ready_anywhere",
                                       .label_selector = ""});
  EXPECT_EQ(list["items"], Json::parse(R"([{"metricName": "queue_messages_ready_anywhere",
      "metricLabels": {}, "timestamp": "2024-05-01T12:00:02Z", "value": "42"}])"));
}

TEST(ExternalMetricsHandlerTest, EmptyVectorIsAnEmptyList) {
  ExternalFixture fixture;  // the fake answers an empty vector (C41)
  Json list = fixture.handler->handle({.namespace_name = "default",
                                       .metric = "queue_messages_ready",
                                       .label_selector = "queue=none"});
  EXPECT_TRUE(list["items"].is_array());
  EXPECT_TRUE(list["items"].empty());
}

TEST(ExternalMetricsHandlerTest, MatrixAndStringAre500NamingTheRule) {
  ExternalFixture fixture;
  for (auto type :
       {prometheus::QueryResult::Type::kMatrix, prometheus::QueryResult::Type::kString}) {
    fixture.prometheus->answer = [type](const std::string&) {
      prometheus::QueryResult result;
      result.type = type;
      return result;
    };
    auto [code, message] =
        outcome(*fixture.handler,
                {.namespace_name = "default", .metric = "kube_queue_depth", .label_selector = ""});
    EXPECT_EQ(code, 500);
    EXPECT_THAT(message, HasSubstr("externalRules[2]"));
  }
}

TEST(ExternalMetricsHandlerTest, UnknownMetricIs404WithCloseNames) {
  ExternalFixture fixture;
  auto [code, message] =
      outcome(*fixture.handler,
              {.namespace_name = "default", .metric = "queue_mesages_ready", .label_selector = ""});
  EXPECT_EQ(code, 404);
  EXPECT_THAT(message, HasSubstr("the server could not find the metric queue_mesages_ready"));
  EXPECT_THAT(message, HasSubstr("queue_messages_ready"));
  auto [other_code, other_message] =
      outcome(*fixture.handler, {.namespace_name = "default", .metric = "zzz"});
  EXPECT_EQ(other_code, 404);
  EXPECT_EQ(other_message, "the server could not find the metric zzz");
  EXPECT_THAT(fixture.prometheus->queries, IsEmpty());
}

// docs/api-contract.md, "Decisions: better on purpose", 11: a Deployment scaled to zero takes
// the series its pods exported with it; the rule still defines the metric, and an HPA asking for
// it must not read "could not find the metric" as a wrong rule.
TEST(ExternalMetricsHandlerTest, AMetricTheConfigDefinesIsAnEmptyListWithoutSeries) {
  auto prometheus = std::make_shared<FakePrometheus>();
  const std::string pattern = R"({__name__=~"vllm:num_requests_.*"})";
  prometheus->series_by_selector[pattern] = {{"vllm:num_requests_waiting", {"namespace", "pod"}}};
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  rule_set->backends = prometheus::BackendSet::single(prometheus);
  rule_set->rules = discovery::compileRules(config::parseConfig(R"(
externalRules:
- seriesQuery: '{__name__=~"vllm:num_requests_.*"}'
  resources: {overrides: {namespace: {resource: namespace}}}
  name: {matches: "^vllm:(.*)$", as: "vllm_${1}_sum"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
- seriesQuery: '{__name__="gateway_queue_size"}'
  resources: {overrides: {namespace: {resource: namespace}}}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
)",
                                                                "e.yaml"),
                                            *rule_set->mapper, nullptr);
  discovery::Relister relister(rule_set, discovery::RelistOptions{});
  relister.relistOnce();
  prometheus->series_by_selector[pattern].clear();  // the pods are gone
  relister.relistOnce();
  ExternalMetricsHandler handler([&relister] { return relister.snapshot(); }, {});
  struct Case {
    std::string metric;
    std::string promql;
  };
  const std::vector<Case> cases = {
      {"vllm_num_requests_waiting_sum", "sum(vllm:num_requests_waiting{namespace=\"ml\"})"},
      // Never a series since the start: its seriesQuery names it.
      {"gateway_queue_size", "sum(gateway_queue_size{namespace=\"ml\"})"},
  };
  for (const auto& c : cases) {
    QueryTrace trace;
    Json list = handler.handle({.namespace_name = "ml", .metric = c.metric}, &trace);
    EXPECT_EQ(list["items"], Json::array()) << c.metric;
    EXPECT_EQ(trace.promql, c.promql);
    EXPECT_TRUE(trace.queried) << c.metric;
  }
  auto [code, message] = outcome(handler, {.namespace_name = "ml", .metric = "vllm_other_sum"});
  EXPECT_EQ(code, 404);
  EXPECT_THAT(message, HasSubstr("the server could not find the metric vllm_other_sum"));
}

// Upstream answers a bare 500 on every request of such a rule; we name the rule and the fix,
// and warn when the rule is compiled.
TEST(ExternalMetricsHandlerTest, NamespacedRuleWithoutNamespaceLabel) {
  ExternalFixture fixture;
  auto [code, message] =
      outcome(*fixture.handler, {.namespace_name = "default", .metric = "orphan_depth"});
  EXPECT_EQ(code, 500);
  EXPECT_THAT(message, HasSubstr("externalRules[3]"));
  EXPECT_THAT(message, HasSubstr("resources.namespaced: false"));
  EXPECT_THAT(message, HasSubstr("namespace: {resource: namespace}"));
  EXPECT_THAT(fixture.prometheus->queries, IsEmpty());
  ASSERT_EQ(fixture.warnings.size(), 1u);
  EXPECT_THAT(fixture.warnings[0], HasSubstr("external.yaml: externalRules[3].resources: "));
  EXPECT_THAT(fixture.warnings[0], HasSubstr("namespaced: false"));
}

// The mapping itself is tabled in custom_metrics_handler_test; here: the external path uses it.
TEST(ExternalMetricsHandlerTest, PrometheusFailuresUseTheSharedMapping) {
  ExternalFixture fixture;
  fixture.prometheus->answer = [](const std::string&) -> prometheus::QueryResult {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kTimeout, 0,
                                      "Prometheus did not answer within 10s");
  };
  auto [code, message] =
      outcome(*fixture.handler, {.namespace_name = "default", .metric = "queue_messages_ready"});
  EXPECT_EQ(code, 503);
  EXPECT_THAT(message, HasSubstr("did not answer"));
}

std::optional<ExternalMetricRequest> parseExternal(const std::string& rest_path) {
  return parseExternalMetricRequest(
      server::parseRequestInfo("GET", "/apis/external.metrics.k8s.io/v1beta1/" + rest_path));
}

TEST(ParseExternalMetricRequestTest, OnlyNamespacedMetricPathsRoute) {
  auto request =
      parseExternal("namespaces/default/queue_messages_ready?labelSelector=queue+in+%28a%2Cb%29");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->namespace_name, "default");
  EXPECT_EQ(request->metric, "queue_messages_ready");
  EXPECT_EQ(request->label_selector, "queue in (a,b)");
  // Conformance C43, then what authorization reads differently: a watch, and the names that
  // upstream's request attributes take for namespace subresources.
  for (const std::string rest :
       {"queue_messages_ready", "namespaces/default", "namespaces/default/a/b", "nodes/default/m",
        "", "namespaces/default/m?watch=true", "watch/namespaces/default/m",
        "namespaces/default/status", "namespaces/default/finalize"}) {
    EXPECT_FALSE(parseExternal(rest)) << rest;
  }
  EXPECT_FALSE(parseExternalMetricRequest(
      server::parseRequestInfo("GET", "/apis/external.metrics.k8s.io/v1beta2/namespaces/a/m")));
}

TEST(ExternalDiscoveryTest, ResourceListAndGroups) {
  ExternalFixture fixture;
  Json list = externalMetricsResourceList(*fixture.relister->snapshot());
  EXPECT_EQ(list["kind"], "APIResourceList");
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(list["groupVersion"], "external.metrics.k8s.io/v1beta1");
  std::vector<std::string> names;
  for (const auto& resource : list["resources"]) {
    names.push_back(resource["name"].get<std::string>());
    // docs/api-contract.md "Discovery documents": upstream's entry shape, namespaced even for
    // namespaced: false rules.
    EXPECT_EQ(resource, Json({{"name", resource["name"]},
                              {"singularName", ""},
                              {"namespaced", true},
                              {"kind", "ExternalMetricValueList"},
                              {"verbs", Json::array({"get"})}}));
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"kube_queue_depth", "orphan_depth", "queue_messages_ready",
                                      "queue_messages_ready_anywhere", "templated_depth"}));

  auto empty_rules = std::make_shared<discovery::RuleSet>();
  empty_rules->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  Json empty = externalMetricsResourceList(discovery::RegistrySnapshot(empty_rules));
  EXPECT_TRUE(empty["resources"].is_array());
  EXPECT_TRUE(empty["resources"].empty());

  Json group = externalMetricsGroup();
  EXPECT_EQ(group, Json::parse(R"({"kind": "APIGroup", "apiVersion": "v1",
      "name": "external.metrics.k8s.io",
      "versions": [{"groupVersion": "external.metrics.k8s.io/v1beta1", "version": "v1beta1"}],
      "preferredVersion": {"groupVersion": "external.metrics.k8s.io/v1beta1",
                           "version": "v1beta1"}})"));
  Json groups = apiGroupList()["groups"];
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["name"], "custom.metrics.k8s.io");
  EXPECT_EQ(groups[1]["name"], "external.metrics.k8s.io");
  EXPECT_EQ(groups[1]["preferredVersion"]["version"], "v1beta1");
}

// Data files are found from this source file, since the tests run from the build tree.
std::string repoFile(const std::string& relative) {
  return (std::filesystem::path(__FILE__).parent_path() / "../../.." / relative).string();
}

TEST(ExternalPresetTest, GpuExternalRulesLoadAndRender) {
  const config::AdapterConfig config =
      config::loadConfigFile(repoFile("config/gpu-external-rules.yaml"));
  const kube::RestMapper mapper = kube::RestMapper::builtin();
  std::vector<std::string> warnings;
  const auto rules = discovery::compileRules(config, mapper, &warnings);
  EXPECT_THAT(warnings, IsEmpty());
  ASSERT_EQ(rules.size(), 2u);
  for (const auto& rule : rules) {
    EXPECT_EQ(rule->kind, discovery::RuleKind::kExternal);
    EXPECT_FALSE(rule->resources.namespaced()) << rule->id;
  }
  EXPECT_EQ(rules[0]->namer.metricName("cuda_test_gpu_avg"), "cuda_test_gpu_avg");
  EXPECT_EQ(rules[1]->namer.metricName("DCGM_FI_DEV_GPU_UTIL"), "gpu_utilization_by_nodepool");
  EXPECT_EQ(rules[1]->namer.metricName("DCGM_FI_DEV_GPU_UTIL_AVG"), std::nullopt);

  // seeds/002: the HPA asks without a selector, from its own namespace, which is not matched.
  ExternalQuerySpec spec{
      .rule = rules[0].get(), .series = "cuda_test_gpu_avg", .namespace_name = "default"};
  EXPECT_EQ(buildExternalQuery(spec, mapper), "cuda_test_gpu_avg{}");
  spec = {.rule = rules[1].get(),
          .series = "DCGM_FI_DEV_GPU_UTIL",
          .namespace_name = "default",
          .selector = promql::parseLabelSelector("label_nodepool=gpu-a")};
  EXPECT_EQ(buildExternalQuery(spec, mapper),
            "avg by (label_nodepool) (\n"
            "  label_replace(DCGM_FI_DEV_GPU_UTIL, \"node\", \"$1\", \"Hostname\", \"(.+)\")\n"
            "  * on (node) group_left (label_nodepool)\n"
            "  max by (node, label_nodepool) (kube_node_labels{label_nodepool=\"gpu-a\"})\n"
            ")");
}

class ExternalRouterTest : public ::testing::Test {
 protected:
  server::HttpResponse get(const Router& router, const std::string& target,
                           const std::string& accept = "") {
    server::HttpRequest request;
    request.method = "GET";
    request.target = target;
    if (!accept.empty()) request.headers.emplace_back("Accept", accept);
    return testing::routeRequest(router, request);
  }

  ExternalFixture fixture_;
  api::SnapshotSource snapshots_ = [relister = fixture_.relister] { return relister->snapshot(); };
  Router router_{RouterParts{.external_metrics = fixture_.handler, .snapshots = snapshots_}};
};

TEST_F(ExternalRouterTest, HpaShapedRequest) {
  fixture_.prometheus->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {sample({{"queue", "orders"}}, 30)};
    return result;
  };
  auto response = get(router_,
                      "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/"
                      "queue_messages_ready?labelSelector=queue+in+%28orders%2Cbilling%29",
                      "application/vnd.kubernetes.protobuf, */*");
  EXPECT_EQ(response.status, 200) << response.bodyText();
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_EQ(fixture_.prometheus->queries.back(),
            R"(queue_messages_ready{queue=~"billing|orders",namespace="default"})");
  Json body = Json::parse(response.bodyText());
  EXPECT_EQ(body["kind"], "ExternalMetricValueList");
  EXPECT_EQ(body["items"][0]["value"], "30");
}

TEST_F(ExternalRouterTest, DiscoveryAndUnservedPaths) {
  auto response = get(router_, "/apis/external.metrics.k8s.io");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Json::parse(response.bodyText())["kind"], "APIGroup");
  response = get(router_, "/apis/external.metrics.k8s.io/v1beta1");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Json::parse(response.bodyText())["resources"].size(), 5u);
  for (const char* path : {"/apis/external.metrics.k8s.io/v1beta1/queue_messages_ready",
                           "/apis/external.metrics.k8s.io/v1beta1/namespaces/default",
                           "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/a/b",
                           "/apis/external.metrics.k8s.io/v1beta2",
                           "/apis/external.metrics.k8s.io/v1beta2/namespaces/default/x"}) {
    response = get(router_, path);
    EXPECT_EQ(response.status, 404) << path;
    Json body = Json::parse(response.bodyText());
    EXPECT_EQ(body["reason"], "NotFound") << path;
    EXPECT_EQ(body["message"], "the server could not find the requested resource") << path;
  }
  response = get(router_, "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/nope");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(Json::parse(response.bodyText())["message"],
            "the server could not find the metric nope");
}

TEST_F(ExternalRouterTest, WithoutExternalRulesDiscoveryIsEmptyNot404) {
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  auto snapshot = std::make_shared<const discovery::RegistrySnapshot>(rule_set);
  Router router(RouterParts{.snapshots = [snapshot] { return snapshot; }});
  auto response = get(router, "/apis/external.metrics.k8s.io/v1beta1");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Json::parse(response.bodyText())["resources"], Json::array());
  response = get(router, "/apis");
  EXPECT_EQ(Json::parse(response.bodyText())["groups"].size(), 2u);
  response = get(router, "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/m");
  EXPECT_EQ(response.status, 404);
}

}  // namespace
}  // namespace metrics_adapter::api
