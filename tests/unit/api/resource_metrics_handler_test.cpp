#include "metrics_adapter/api/resource_metrics_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "metrics_adapter/server/request_info.h"
#include "unit/fake_prometheus.h"
#include "unit/resource/test_rules.h"

namespace metrics_adapter::api {
namespace {

using ::testing::HasSubstr;

// Cluster objects as the informers hold them, already sorted by namespace then name.
class ObjectsLister : public kube::ObjectLister {
 public:
  std::vector<kube::ObjectMeta> pods;
  std::vector<kube::ObjectMeta> nodes;
  std::vector<std::string> field_selectors;

  std::vector<std::string> listNames(const kube::ResourceInfo&, const std::string&,
                                     const promql::LabelSelector&) override {
    return {};
  }
  std::vector<kube::ObjectMeta> listObjects(const kube::ResourceInfo& resource,
                                            const std::string& namespace_name,
                                            const promql::LabelSelector& selector,
                                            const std::string& field_selector) override {
    field_selectors.push_back(field_selector);
    std::vector<kube::ObjectMeta> found;
    for (const auto& object : resource.plural == "nodes" ? nodes : pods) {
      if ((namespace_name.empty() || object.namespace_name == namespace_name) &&
          promql::matches(selector, object.labels)) {
        found.push_back(object);
      }
    }
    return found;
  }
};

kube::ObjectMeta objectMeta(std::string namespace_name, std::string name,
                            std::map<std::string, std::string> labels = {}) {
  kube::ObjectMeta object;
  object.namespace_name = std::move(namespace_name);
  object.name = std::move(name);
  object.labels = std::move(labels);
  return object;
}

// One container "app" per pod named in a query: 0.25 cores and 64 MiB; nodes 2 cores and 1 GiB.
// Queries for the namespace "down" fail.
prometheus::QueryResult answerFor(const std::string& promql) {
  if (promql.find(R"(namespace="down")") != std::string::npos) {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kUnreachable, 0,
                                      "connection refused");
  }
  const bool cpu = promql.find("cpu") != std::string::npos;
  prometheus::QueryResult result;
  std::smatch match;
  if (std::regex_search(promql, match, std::regex(R"re(instance=~?"([^"]*)")re"))) {
    for (const auto& node : {std::string("n1"), std::string("n2")}) {
      if (match[1].str().find(node) == std::string::npos) continue;
      result.samples.push_back(
          {.labels = {{"instance", node}}, .value = cpu ? 2.0 : 1073741824.0, .timestamp = 1e9});
    }
    return result;
  }
  std::regex_search(promql, match, std::regex(R"re(pod=~?"([^"]*)")re"));
  std::string names = match[1].str();
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t end = std::min(names.find('|', start), names.size());
    result.samples.push_back(
        {.labels = {{"pod", names.substr(start, end - start)}, {"container", "app"}},
         .value = cpu ? 0.25 : 67108864.0,
         .timestamp = 1e9});
    start = end + 1;
  }
  return result;
}

class ResourceMetricsHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lister_->pods = {objectMeta("default", "web-1", {{"app", "web"}}),
                     objectMeta("default", "web-2", {{"app", "web"}}), objectMeta("down", "db-1"),
                     objectMeta("kube-system", "dns-1")};
    lister_->nodes = {objectMeta("", "n1"), objectMeta("", "n2"), objectMeta("", "n3")};
    prometheus_->answer = answerFor;
  }

  Json handle(const ResourceMetricsRequest& request) {
    return handler_.handle(request, *rules_, backend_, resource::test::builtinMapper());
  }

  int errorCode(const ResourceMetricsRequest& request) {
    try {
      handle(request);
    } catch (const ApiError& e) {
      message_ = e.what();
      return e.code();
    }
    return 200;
  }

  std::shared_ptr<ObjectsLister> lister_ = std::make_shared<ObjectsLister>();
  std::shared_ptr<testing::FakePrometheus> prometheus_ =
      std::make_shared<testing::FakePrometheus>();
  ResourceMetricsHandler handler_{lister_, std::make_shared<const resource::ResourceMetrics>(
                                               resource::ResourceMetricsOptions{}, nullptr)};
  std::shared_ptr<const discovery::CompiledResourceRules> rules_ =
      resource::test::compileResourceRules();
  prometheus::Backend backend_ = testing::asBackend(prometheus_);
  std::string message_;
};

TEST_F(ResourceMetricsHandlerTest, NamespacedListIsWhatTheHpaReads) {
  const Json list = handle({.namespace_name = "default", .label_selector = "app=web"});
  EXPECT_EQ(list["kind"], "PodMetricsList");
  EXPECT_EQ(list["apiVersion"], "metrics.k8s.io/v1beta1");
  ASSERT_EQ(list["items"].size(), 2u);
  const Json& item = list["items"][0];
  EXPECT_EQ(item["metadata"]["name"], "web-1");
  EXPECT_EQ(item["metadata"]["namespace"], "default");
  EXPECT_EQ(item["metadata"]["labels"], Json({{"app", "web"}}));
  EXPECT_EQ(item["window"], "1m0s");
  EXPECT_EQ(item["timestamp"], "2001-09-09T01:46:40Z");
  EXPECT_EQ(item["containers"],
            Json::parse(R"([{"name":"app","usage":{"cpu":"250m","memory":"64Mi"}}])"));
  // Only Running pods are listed.
  EXPECT_EQ(lister_->field_selectors, std::vector<std::string>{"status.phase=Running"});
}

TEST_F(ResourceMetricsHandlerTest, AFailingNamespaceDoesNotHideTheOthers) {
  const Json list = handle({});
  std::vector<std::string> names;
  for (const auto& item : list["items"]) names.push_back(item["metadata"]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"web-1", "web-2", "dns-1"}));
  // Asked for on its own, the failing namespace answers 503 naming its query.
  EXPECT_EQ(errorCode({.namespace_name = "down"}), 503);
  EXPECT_THAT(message_, HasSubstr("connection refused"));
  EXPECT_THAT(message_, HasSubstr(R"((query: sum(rate(container_cpu_usage_seconds_total{)"));
}

TEST_F(ResourceMetricsHandlerTest, OnePodAndItsNotFounds) {
  const Json pod = handle({.namespace_name = "default", .name = "web-2"});
  EXPECT_EQ(pod["kind"], "PodMetrics");
  EXPECT_EQ(pod["metadata"]["name"], "web-2");
  EXPECT_EQ(errorCode({.namespace_name = "default", .name = "web-9"}), 404);
  EXPECT_EQ(message_, R"(pods "web-9" not found)");
  prometheus_->answer = [](const std::string&) { return prometheus::QueryResult{}; };
  EXPECT_EQ(errorCode({.namespace_name = "default", .name = "web-2"}), 404);
  EXPECT_EQ(message_, R"(podmetrics.metrics.k8s.io "default/web-2" not found)");
}

TEST_F(ResourceMetricsHandlerTest, Nodes) {
  const Json list = handle({.nodes = true});
  EXPECT_EQ(list["kind"], "NodeMetricsList");
  ASSERT_EQ(list["items"].size(), 2u);  // n3 has no metrics
  EXPECT_EQ(list["items"][1]["metadata"]["name"], "n2");
  EXPECT_FALSE(list["items"][1]["metadata"].contains("namespace"));
  EXPECT_EQ(list["items"][1]["usage"], Json::parse(R"({"cpu":"2","memory":"1Gi"})"));
  EXPECT_EQ(errorCode({.nodes = true, .name = "n3"}), 404);
  EXPECT_EQ(message_, R"(nodemetrics.metrics.k8s.io "n3" not found)");
  EXPECT_EQ(errorCode({.nodes = true, .name = "n9"}), 404);
  EXPECT_EQ(message_, R"(nodes "n9" not found)");
  EXPECT_EQ(lister_->field_selectors, (std::vector<std::string>{"", "", ""}));
}

TEST_F(ResourceMetricsHandlerTest, FailingNodeQueryIsAnErrorNotAnEmptyList) {
  prometheus_->answer = [](const std::string&) -> prometheus::QueryResult {
    throw prometheus::PrometheusError(prometheus::PrometheusError::Kind::kTimeout, 0, "timeout");
  };
  EXPECT_EQ(errorCode({.nodes = true}), 503);
  EXPECT_THAT(message_, HasSubstr("(query: "));
}

TEST_F(ResourceMetricsHandlerTest, SelectorsAndFieldSelectors) {
  EXPECT_EQ(handle({.field_selector = "metadata.namespace!=default"})["items"].size(), 1u);
  EXPECT_EQ(handle({.field_selector = "metadata.name=web-2"})["items"].size(), 1u);
  EXPECT_EQ(errorCode({.field_selector = "spec.nodeName=n1"}), 400);
  EXPECT_EQ(message_, "field label not supported: spec.nodeName");
  EXPECT_EQ(errorCode({.nodes = true, .field_selector = "metadata.namespace=x"}), 400);
  EXPECT_EQ(errorCode({.label_selector = "app in ("}), 400);
}

TEST_F(ResourceMetricsHandlerTest, WithoutAKubernetesApiEverythingIs503) {
  ResourceMetricsHandler handler(nullptr, std::make_shared<const resource::ResourceMetrics>(
                                              resource::ResourceMetricsOptions{}, nullptr));
  try {
    handler.handle({}, *rules_, backend_, resource::test::builtinMapper());
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 503);
  }
}

struct RouteCase {
  const char* target;
  std::optional<ResourceMetricsRequest> expected;
};

TEST(ResourceMetricsRouteTest, RoutesFromRequestInfo) {
  const RouteCase cases[] = {
      {"/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a%3Db",
       ResourceMetricsRequest{.label_selector = "a=b"}},
      {"/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods?fieldSelector=metadata.name%3Dp",
       ResourceMetricsRequest{.namespace_name = "ns", .field_selector = "metadata.name=p"}},
      {"/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p",
       ResourceMetricsRequest{.namespace_name = "ns", .name = "p"}},
      {"/apis/metrics.k8s.io/v1beta1/nodes", ResourceMetricsRequest{.nodes = true}},
      {"/apis/metrics.k8s.io/v1beta1/nodes/n1",
       ResourceMetricsRequest{.nodes = true, .name = "n1"}},
      {"/apis/metrics.k8s.io/v1beta1/namespaces/ns/nodes", std::nullopt},
      {"/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p/log", std::nullopt},
      {"/apis/metrics.k8s.io/v1beta1/services", std::nullopt},
      {"/apis/metrics.k8s.io/v1beta1/pods?watch=1", std::nullopt},
      {"/apis/metrics.k8s.io/v1/pods", std::nullopt},
  };
  for (const RouteCase& c : cases) {
    SCOPED_TRACE(c.target);
    const auto parsed = parseResourceMetricsRequest(server::parseRequestInfo("GET", c.target));
    ASSERT_EQ(parsed.has_value(), c.expected.has_value());
    if (!parsed) continue;
    EXPECT_EQ(parsed->nodes, c.expected->nodes);
    EXPECT_EQ(parsed->namespace_name, c.expected->namespace_name);
    EXPECT_EQ(parsed->name, c.expected->name);
    EXPECT_EQ(parsed->label_selector, c.expected->label_selector);
    EXPECT_EQ(parsed->field_selector, c.expected->field_selector);
  }
}

TEST(GoDurationTest, AsTimeDurationStringWritesIt) {
  using std::chrono::milliseconds;
  EXPECT_EQ(formatGoDuration(milliseconds(0)), "0s");
  EXPECT_EQ(formatGoDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(formatGoDuration(milliseconds(30'000)), "30s");
  EXPECT_EQ(formatGoDuration(milliseconds(1'500)), "1.5s");
  EXPECT_EQ(formatGoDuration(milliseconds(180'000)), "3m0s");
  EXPECT_EQ(formatGoDuration(milliseconds(5'400'000)), "1h30m0s");
  EXPECT_EQ(formatGoDuration(milliseconds(3'600'250)), "1h0m0.25s");
}

}  // namespace
}  // namespace metrics_adapter::api
