#include "metrics_adapter/api/custom_metrics_handler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "metrics_adapter/promql/label_selector.h"
#include "metrics_adapter/server/status.h"
#include "metrics_adapter/text/utf8.h"
#include "unit/api/fake_name_lister.h"
#include "unit/fake_prometheus.h"

namespace metrics_adapter::api {
namespace {

using testing::FakeNameLister;
using testing::FakePrometheus;
using testing::sample;

// The ConfigMap of the Alibaba GPU walkthrough (seeds/000).
constexpr const char* kAlibabaRules = R"(
rules:
- seriesQuery: '{uuid!=""}'
  resources:
    overrides:
      node_name: {resource: "node"}
      pod_name: {resource: "pod"}
      namespace_name: {resource: "namespace"}
  name:
    matches: ^nvidia_gpu_(.*)$
    as: "${1}_over_time"
  metricsQuery: ceil(avg_over_time(<<.Series>>{<<.LabelMatchers>>}[3m]))
- seriesQuery: '{uuid!=""}'
  resources:
    overrides:
      node_name: {resource: "node"}
      pod_name: {resource: "pod"}
      namespace_name: {resource: "namespace"}
  name:
    matches: ^nvidia_gpu_(.*)$
    as: "${1}_current"
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
)";

class CustomMetricsHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prometheus_ = std::make_shared<FakePrometheus>();
    const std::vector<std::string> labels = {"uuid", "node_name", "pod_name", "namespace_name",
                                             "minor_number"};
    prometheus_->series_by_selector["{uuid!=\"\"}"] = {{"nvidia_gpu_duty_cycle", labels},
                                                       {"nvidia_gpu_memory_used_bytes", labels}};
    auto config = config::parseConfig(kAlibabaRules, "gpu.yaml");
    auto rule_set = std::make_shared<discovery::RuleSet>();
    rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
    rule_set->backends = prometheus::BackendSet::single(prometheus_);
    std::vector<std::string> warnings;
    rule_set->rules = discovery::compileRules(config, *rule_set->mapper, &warnings);
    relister_ = std::make_shared<discovery::Relister>(rule_set, discovery::RelistOptions{});
    relister_->relistOnce();
    lister_ = std::make_shared<FakeNameLister>();
    handler_ = std::make_unique<CustomMetricsHandler>([this] { return relister_->snapshot(); },
                                                      lister_, CustomMetricsOptions{});
  }

  CustomMetricRequest request(std::string namespace_name, std::string resource, std::string name,
                              std::string metric, std::string version = "v1beta1") {
    CustomMetricRequest r;
    r.version = std::move(version);
    r.namespace_name = std::move(namespace_name);
    r.resource = std::move(resource);
    r.name = std::move(name);
    r.metric = std::move(metric);
    return r;
  }

  int errorCode(const CustomMetricRequest& r, std::string* message = nullptr) {
    try {
      handler_->handle(r);
    } catch (const ApiError& error) {
      if (message) *message = error.what();
      return error.code();
    }
    return 200;
  }

  std::shared_ptr<FakePrometheus> prometheus_;
  std::shared_ptr<discovery::Relister> relister_;
  std::shared_ptr<FakeNameLister> lister_;
  std::unique_ptr<CustomMetricsHandler> handler_;
};

TEST_F(CustomMetricsHandlerTest, OneSeriesCallServesBothRulesOfTheSameQuery) {
  EXPECT_EQ(prometheus_->series_calls.size(), 1u);
  auto snapshot = relister_->snapshot();
  for (const char* metric : {"duty_cycle_current", "duty_cycle_over_time",
                             "memory_used_bytes_current", "memory_used_bytes_over_time"}) {
    EXPECT_TRUE(snapshot->findCustom("pods", metric)) << metric;
    EXPECT_TRUE(snapshot->findCustom("nodes", metric)) << metric;
    EXPECT_TRUE(snapshot->findCustom("namespaces", metric)) << metric;
  }
  EXPECT_FALSE(snapshot->findCustom("pods", "duty_cycle"));
  EXPECT_EQ(snapshot->findCustom("pods", "duty_cycle_current")->series_name,
            "nvidia_gpu_duty_cycle");
}

TEST_F(CustomMetricsHandlerTest, WildcardPodsWithoutSelectorAsksForEveryPodOfTheNamespace) {
  prometheus_->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {
        sample({{"pod_name", "b"}, {"namespace_name", "default"}}, 82.25, 1714564801.5),
        sample({{"pod_name", "a"}, {"namespace_name", "default"}}, 37.5),
        sample({{"pod_name", "nan"}}, std::nan("")),
        sample({{"namespace_name", "default"}}, 1)};  // no pod label: ignored
    return result;
  };
  Json list = handler_->handle(request("default", "pods", "*", "duty_cycle_current"));
  ASSERT_EQ(prometheus_->queries.size(), 1u);
  EXPECT_EQ(prometheus_->queries[0],
            "nvidia_gpu_duty_cycle{namespace_name=\"default\",pod_name!=\"\"}");
  EXPECT_EQ(list["kind"], "MetricValueList");
  EXPECT_EQ(list["apiVersion"], "custom.metrics.k8s.io/v1beta1");
  ASSERT_EQ(list["items"].size(), 2u);  // sorted by name, NaN skipped
  const auto& first = list["items"][0];
  EXPECT_EQ(first["describedObject"],
            Json({{"kind", "Pod"}, {"namespace", "default"}, {"name", "a"}, {"apiVersion", "v1"}}));
  EXPECT_EQ(first["metricName"], "duty_cycle_current");
  EXPECT_EQ(first["value"], "37500m");
  EXPECT_EQ(first["timestamp"], "2024-05-01T12:00:00Z");
  EXPECT_TRUE(first["selector"].is_null());
  EXPECT_EQ(list["items"][1]["value"], "82250m");
  EXPECT_EQ(list["items"][1]["timestamp"], "2024-05-01T12:00:01Z");
}

TEST_F(CustomMetricsHandlerTest, V1beta2ShapeAndMetricSelectorOrder) {
  prometheus_->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {sample({{"node_name", "n1"}}, 3)};
    return result;
  };
  auto r = request("", "nodes", "n1", "duty_cycle_over_time", "v1beta2");
  r.metric_label_selector = "uuid=GPU-1,minor_number in (1,0)";
  Json list = handler_->handle(r);
  EXPECT_EQ(prometheus_->queries.back(),
            "ceil(avg_over_time(nvidia_gpu_duty_cycle{minor_number=~\"0|1\",uuid=\"GPU-1\","
            "node_name=\"n1\"}[3m]))");
  ASSERT_EQ(list["items"].size(), 1u);
  const auto& item = list["items"][0];
  EXPECT_FALSE(item.contains("metricName"));
  EXPECT_EQ(item["metric"]["name"], "duty_cycle_over_time");
  EXPECT_EQ(item["metric"]["selector"]["matchLabels"]["uuid"], "GPU-1");
  EXPECT_EQ(item["describedObject"],
            Json({{"kind", "Node"}, {"name", "n1"}, {"apiVersion", "v1"}}));
  EXPECT_EQ(item["value"], "3");
}

TEST_F(CustomMetricsHandlerTest, NamespaceObjectIsMatchedByTheNamespaceLabelOnly) {
  prometheus_->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {sample({{"namespace_name", "default"}}, 10),
                      sample({{"namespace_name", "default"}}, 20)};  // last wins
    return result;
  };
  Json list = handler_->handle(request("", "namespaces", "default", "duty_cycle_current"));
  EXPECT_EQ(prometheus_->queries.back(), "nvidia_gpu_duty_cycle{namespace_name=\"default\"}");
  EXPECT_EQ(list["items"][0]["value"], "20");
  EXPECT_EQ(list["items"][0]["describedObject"]["kind"], "Namespace");
}

TEST_F(CustomMetricsHandlerTest, ListedNamesAreEscapedInTheAlternation) {
  lister_->names = {"web.1", "web-2"};
  prometheus_->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {sample({{"pod_name", "web.1"}}, 1), sample({{"pod_name", "webx1"}}, 9),
                      sample({{"pod_name", "web-2"}}, 2)};
    return result;
  };
  auto r = request("default", "pods", "*", "duty_cycle_current");
  r.label_selector = "app=web";
  Json list = handler_->handle(r);
  EXPECT_EQ(prometheus_->queries.back(),
            "nvidia_gpu_duty_cycle{namespace_name=\"default\",pod_name=~\"web-2|web\\\\.1\"}");
  ASSERT_EQ(list["items"].size(), 2u);  // "webx1" was not asked for
  EXPECT_EQ(list["items"][0]["describedObject"]["name"], "web-2");
  EXPECT_EQ(list["items"][1]["describedObject"]["name"], "web.1");
}

TEST_F(CustomMetricsHandlerTest, AWildcardListIsSortedByNameAndTheLastSampleOfAnObjectWins) {
  lister_->names = {"web-b", "web-a", "web-c"};
  prometheus_->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {sample({{"pod_name", "web-b"}}, 1), sample({{"pod_name", "web-c"}}, 5),
                      sample({{"pod_name", "web-a"}}, 2), sample({{"pod_name", "web-b"}}, 3),
                      sample({{"pod_name", "web-c"}}, 6), sample({{"pod_name", "web-b"}}, 4)};
    return result;
  };
  auto r = request("default", "pods", "*", "duty_cycle_current");
  r.label_selector = "app=web";
  Json list = handler_->handle(r);
  ASSERT_EQ(list["items"].size(), 3u);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"web-a", "2"}, {"web-b", "4"}, {"web-c", "6"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(list["items"][i]["describedObject"]["name"], expected[i].first) << i;
    EXPECT_EQ(list["items"][i]["value"], expected[i].second) << i;
  }
}

TEST_F(CustomMetricsHandlerTest, NoListedObjectsIsAnEmptyListWithoutAQuery) {
  auto r = request("default", "pods", "*", "duty_cycle_current");
  r.label_selector = "app=none";
  Json list = handler_->handle(r);
  EXPECT_TRUE(list["items"].empty());
  EXPECT_TRUE(prometheus_->queries.empty());
}

// An HPA's Pods request: the labelSelector matched pods, none of which got a value. The 404's
// message (which `kubectl describe hpa` shows) says so and why; one pod with a value is a list.
TEST_F(CustomMetricsHandlerTest, MatchedObjectsWithoutAnyValueAre404NamingTheCause) {
  lister_->names = {"web-a", "web-b"};
  std::vector<prometheus::Sample> samples;
  prometheus_->answer = [&samples](const std::string&) {
    prometheus::QueryResult result;
    result.samples = samples;
    return result;
  };
  auto r = request("default", "pods", "*", "duty_cycle_current");
  r.label_selector = "app=web";
  const std::string rule =
      relister_->snapshot()->findCustom("pods", "duty_cycle_current")->rule->id;
  const std::string head =
      "the server could not find the metric duty_cycle_current for pods: none of the 2 pods "
      "matching \"app=web\" has a value: ";

  std::string message;
  EXPECT_EQ(errorCode(r, &message), 404);
  EXPECT_EQ(message, head + rule + "'s query returned no sample");

  samples = {sample({{"pod_name", "web-a"}}, std::nan("")),
             sample({{"pod_name", "web-b"}}, std::numeric_limits<double>::infinity())};
  EXPECT_EQ(errorCode(r, &message), 404);
  EXPECT_EQ(message, head + "their samples are not a number (NaN, ±Inf or an exporter's blank)");

  samples = {sample({{"pod_name", "web-old"}}, 3), sample({{"namespace_name", "default"}}, 4)};
  EXPECT_EQ(errorCode(r, &message), 404);
  EXPECT_EQ(message, head + rule +
                         "'s query returned 2 sample(s), none with pod_name naming one of them "
                         "(one names pod_name=\"web-old\")");

  samples.push_back(sample({{"pod_name", "web-b"}}, 7));
  Json list = handler_->handle(r);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["describedObject"]["name"], "web-b");
}

TEST_F(CustomMetricsHandlerTest, ErrorsCarryTheRightCode) {
  std::string message;
  EXPECT_EQ(errorCode(request("default", "pods", "*", "duty_cycle_curent"), &message), 404);
  EXPECT_NE(message.find("the server could not find the metric duty_cycle_curent for pods"),
            std::string::npos);
  EXPECT_NE(message.find("duty_cycle_current"), std::string::npos) << message;
  EXPECT_EQ(errorCode(request("default", "widgets", "*", "duty_cycle_current")), 404);
  EXPECT_EQ(errorCode(request("default", "nodes", "*", "duty_cycle_current")), 404);  // scope
  EXPECT_EQ(errorCode(request("", "pods", "*", "duty_cycle_current")), 404);          // scope
  EXPECT_EQ(errorCode(request("default", "pods", "absent", "duty_cycle_current"), &message), 404);
  EXPECT_NE(message.find("for pods absent"), std::string::npos) << message;
  // The cause, in the message `kubectl describe hpa` shows.
  const std::string rule =
      relister_->snapshot()->findCustom("pods", "duty_cycle_current")->rule->id;
  EXPECT_NE(message.find(rule + "'s query returned no sample with pod_name=\"absent\""),
            std::string::npos)
      << message;

  const std::size_t queries_before = prometheus_->queries.size();
  auto bad_selector = request("default", "pods", "*", "duty_cycle_current");
  bad_selector.label_selector = "app in (web";
  EXPECT_EQ(errorCode(bad_selector), 400);
  auto bad_metric_selector = request("default", "pods", "p", "duty_cycle_current");
  bad_metric_selector.metric_label_selector = "minor_number>1";
  EXPECT_EQ(errorCode(bad_metric_selector), 400);
  bad_metric_selector.metric_label_selector = "app.kubernetes.io/name=x";  // not a PromQL label
  EXPECT_EQ(errorCode(bad_metric_selector), 400);
  EXPECT_EQ(prometheus_->queries.size(), queries_before);  // refused before asking Prometheus
}

TEST_F(CustomMetricsHandlerTest, PrometheusFailuresMapTo503Or500) {
  using Kind = prometheus::PrometheusError::Kind;
  struct Case {
    Kind kind;
    int http_status;
    int expected;
    std::string error_type = "bad_data";
  };
  // Prometheus's own "cannot answer now" (503 with errorType unavailable or timeout) is a 503.
  for (const Case& c :
       {Case{Kind::kUnreachable, 0, 503}, Case{Kind::kTimeout, 0, 503},
        Case{Kind::kHttpStatus, 502, 503}, Case{Kind::kApiError, 400, 500},
        Case{Kind::kApiError, 503, 503, "unavailable"}, Case{Kind::kApiError, 0, 503, "timeout"},
        Case{Kind::kApiError, 422, 500, "execution"}, Case{Kind::kBadResponse, 200, 500}}) {
    prometheus_->answer = [c](const std::string&) -> prometheus::QueryResult {
      throw prometheus::PrometheusError(c.kind, c.http_status, c.error_type + ": boom");
    };
    std::string message;
    EXPECT_EQ(errorCode(request("default", "pods", "*", "duty_cycle_current"), &message),
              c.expected);
    EXPECT_NE(message.find("boom"), std::string::npos);
  }
}

TEST_F(CustomMetricsHandlerTest, FailingSeriesQueryKeepsTheLastGoodDiscovery) {
  prometheus_->failing_selectors["{uuid!=\"\"}"] = "connection refused";
  relister_->relistOnce();
  EXPECT_TRUE(relister_->snapshot()->findCustom("pods", "duty_cycle_current"));
  EXPECT_EQ(relister_->lastErrors().at({"default", "{uuid!=\"\"}"}), "connection refused");
}

// The keys of a JSON object, in order.
std::vector<std::string> keysOf(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

TEST_F(CustomMetricsHandlerTest, RenderWritesWhatDumpWritesForTheTree) {
  prometheus_->answer = [](const std::string&) {
    prometheus::QueryResult result;
    result.samples = {sample({{"pod_name", "p1"}, {"node_name", "n1"}}, 1.5, 1714564801),
                      sample({{"pod_name", "p2"}, {"node_name", "n1"}}, 2)};
    return result;
  };
  auto v1beta1 = request("default", "pods", "*", "duty_cycle_current");
  auto v1beta2 = request("", "nodes", "n1", "duty_cycle_over_time", "v1beta2");
  v1beta2.metric_label_selector = "uuid=GPU-1,minor_number in (1,0)";
  auto none_listed = request("default", "pods", "*", "duty_cycle_current", "v1beta2");
  none_listed.label_selector = "app=none";
  for (const auto& r : {v1beta1, v1beta2, none_listed}) {
    const std::string text = handler_->render(r);
    const Json tree = Json::parse(text);
    EXPECT_EQ(text, tree.dump()) << r.version << " " << r.resource << "/" << r.name;
    EXPECT_EQ(keysOf(tree), (std::vector<std::string>{"kind", "apiVersion", "metadata", "items"}));
    EXPECT_EQ(tree["apiVersion"], "custom.metrics.k8s.io/" + r.version);
  }

  const Json list = Json::parse(handler_->render(v1beta1));
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(keysOf(list["items"][0]), (std::vector<std::string>{"describedObject", "metricName",
                                                                "timestamp", "value", "selector"}));
  EXPECT_EQ(list["items"][0]["timestamp"], "2024-05-01T12:00:01Z");
  EXPECT_EQ(list["items"][1]["timestamp"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(list["items"][1]["value"], "2");

  const Json node = Json::parse(handler_->render(v1beta2))["items"][0];
  EXPECT_EQ(keysOf(node),
            (std::vector<std::string>{"describedObject", "metric", "timestamp", "value"}));
  EXPECT_EQ(keysOf(node["metric"]), (std::vector<std::string>{"name", "selector"}));
  EXPECT_EQ(
      node["metric"]["selector"],
      Json(promql::toLabelSelectorJson(promql::parseLabelSelector(v1beta2.metric_label_selector))));
}

TEST_F(CustomMetricsHandlerTest, NamesNeedingEscapesSurviveTheRoundTrip) {
  const std::vector<std::string> names = {"quote\"d", "back\\slash", "tab\tand\nnewline",
                                          "bell\x07", "caf\xc3\xa9", "del\x7f"};
  prometheus_->answer = [names](const std::string&) {
    prometheus::QueryResult result;
    for (const auto& name : names) result.samples.push_back(sample({{"pod_name", name}}, 1));
    result.samples.push_back(sample({{"pod_name", "bad\xff"}}, 1));
    return result;
  };
  const auto wildcard = request("default", "pods", "*", "duty_cycle_current");
  const std::string text = handler_->render(wildcard);
  const Json list = Json::parse(text);
  // The direct rendering says what the JSON answer (?pretty) says; only escaping style may differ.
  EXPECT_EQ(list, handler_->handle(wildcard));
  std::set<std::string> rendered;
  for (const auto& item : list["items"]) rendered.insert(item["describedObject"]["name"]);
  std::set<std::string> expected(names.begin(), names.end());
  expected.insert("bad\xef\xbf\xbd");  // invalid UTF-8 becomes U+FFFD
  EXPECT_EQ(rendered, expected);
}

// Names in answers go through the one escaper of Status bodies (server::jsonQuote, Go's
// encoding/json rules): valid text reads back the same, each invalid byte as U+FFFD.
TEST(AppendJsonStringTest, WritesJsonThatReadsBackAsTheText) {
  std::vector<std::string> texts = {"",
                                    "plain-ascii 0123 ~{}[]:,",
                                    "\"",
                                    "\\",
                                    "\x7f",
                                    "caf\xc3\xa9",
                                    "\xf0\x9f\x98\x80",
                                    "cut \xc3",
                                    "stray \x80 byte",
                                    "\xed\xa0\x80"};
  for (int c = 0; c < 0x20; ++c) texts.push_back("c" + std::string(1, static_cast<char>(c)) + "c");
  for (const auto& text : texts) {
    std::string out = "prefix";
    appendJsonString(out, text);
    ASSERT_EQ(out.rfind("prefix", 0), 0u);
    EXPECT_EQ(out.substr(6), server::jsonQuote(text)) << text;
    std::string expected;  // the text with every byte of invalid UTF-8 replaced by U+FFFD
    for (std::size_t i = 0; i < text.size();) {
      const std::size_t length = text::utf8SequenceLength(text, i);
      expected += length == 0 ? std::string("\xEF\xBF\xBD") : text.substr(i, length);
      i += length == 0 ? 1 : length;
    }
    EXPECT_EQ(Json::parse(out.substr(6)).get<std::string>(), expected) << text;
  }
}

TEST(FormatTimestampTest, SecondPrecisionUtc) {
  EXPECT_EQ(formatTimestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(formatTimestamp(1714564800.999), "2024-05-01T12:00:00Z");
  EXPECT_EQ(formatTimestamp(std::nan("")), "1970-01-01T00:00:00Z");
}

// Times no time_t holds are never converted to one (undefined behaviour, caught by UBSan's
// float-cast-overflow): they are clamped to the servable range first.
TEST(FormatTimestampTest, TimesOutsideTheServableRangeAreClampedNotCast) {
  EXPECT_EQ(formatTimestamp(253402300799.0), "9999-12-31T23:59:59Z");
  EXPECT_EQ(formatTimestamp(253402300800.0), "9999-12-31T23:59:59Z");
  EXPECT_EQ(formatTimestamp(1e300), "9999-12-31T23:59:59Z");
  EXPECT_EQ(formatTimestamp(std::numeric_limits<double>::max()), "9999-12-31T23:59:59Z");
  EXPECT_EQ(formatTimestamp(std::numeric_limits<double>::infinity()), "9999-12-31T23:59:59Z");
  EXPECT_EQ(formatTimestamp(-1e300), "1970-01-01T00:00:00Z");
  EXPECT_EQ(formatTimestamp(-std::numeric_limits<double>::infinity()), "1970-01-01T00:00:00Z");
  EXPECT_EQ(formatTimestamp(-0.5), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace metrics_adapter::api
