#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metrics_adapter/api/aggregated_discovery.h"
#include "metrics_adapter/api/discovery_documents.h"
#include "metrics_adapter/api/router.h"
#include "metrics_adapter/config/config.h"
#include "metrics_adapter/discovery/compiled_rule.h"
#include "metrics_adapter/discovery/relister.h"
#include "unit/api/route_request.h"
#include "unit/fake_prometheus.h"

namespace metrics_adapter::api {
namespace {

constexpr const char* kRules = R"(
rules:
- seriesQuery: '{__name__=~"^gpu_.*"}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
externalRules:
- seriesQuery: '{__name__=~"^queue_.*"}'
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
)";

// Discovery documents are rendered once per registry snapshot: these tests swap snapshots under
// a router and check that every answer is the document of the snapshot in force.
class RouterDiscoveryTest : public ::testing::Test {
 protected:
  RouterDiscoveryTest() {
    auto rule_set = std::make_shared<discovery::RuleSet>();
    rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
    rule_set->backends = prometheus::BackendSet::single(prometheus_);
    std::vector<std::string> warnings;
    rule_set->rules = discovery::compileRules(config::parseConfig(kRules, "rules.yaml"),
                                              *rule_set->mapper, &warnings);
    relister_ = std::make_shared<discovery::Relister>(rule_set, discovery::RelistOptions{});
  }

  void discover(std::vector<std::string> gpu_series, std::vector<std::string> queue_series) {
    auto& gpu = prometheus_->series_by_selector["{__name__=~\"^gpu_.*\"}"];
    auto& queue = prometheus_->series_by_selector["{__name__=~\"^queue_.*\"}"];
    gpu.clear();
    queue.clear();
    for (auto& name : gpu_series) gpu.push_back({name, {"namespace", "pod"}});
    for (auto& name : queue_series) queue.push_back({name, {"queue"}});
    relister_->relistOnce();
  }

  Json get(const std::string& target, const std::string& user_agent = "") {
    server::HttpRequest request;
    request.method = "GET";
    request.target = target;
    if (!user_agent.empty()) request.headers.emplace_back("User-Agent", user_agent);
    auto response = testing::routeRequest(router_, request);
    EXPECT_EQ(response.status, 200) << target << ": " << response.bodyText();
    EXPECT_EQ(response.content_type, "application/json");
    return Json::parse(response.bodyText());
  }

  server::HttpResponse getAggregated(const std::string& if_none_match = "") {
    server::HttpRequest request;
    request.method = "GET";
    request.target = "/apis";
    request.headers.emplace_back("Accept", kAggregatedAccept);
    if (!if_none_match.empty()) request.headers.emplace_back("If-None-Match", if_none_match);
    return testing::routeRequest(router_, request);
  }

  static std::string etagOf(const server::HttpResponse& response) {
    for (const auto& [name, value] : response.headers) {
      if (name == "ETag") return value;
    }
    return "";
  }

  // What the kube-aggregator's discovery manager sends.
  static constexpr const char* kAggregatedAccept =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
      "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

  std::shared_ptr<testing::FakePrometheus> prometheus_ =
      std::make_shared<testing::FakePrometheus>();
  std::shared_ptr<discovery::Relister> relister_;
  SnapshotSource snapshots_ = [this] { return relister_->snapshot(); };
  Router router_{RouterParts{.snapshots = snapshots_}};
};

TEST_F(RouterDiscoveryTest, EachVersionAnswersTheDocumentOfTheCurrentSnapshot) {
  discover({"gpu_util"}, {"queue_depth"});
  for (int round = 0; round < 2; ++round) {  // the second round is answered from the cache
    for (const std::string version : {"v1beta1", "v1beta2"}) {
      EXPECT_EQ(get("/apis/custom.metrics.k8s.io/" + version),
                customMetricsResourceList(version, *relister_->snapshot()));
    }
    EXPECT_EQ(get("/apis/external.metrics.k8s.io/v1beta1"),
              externalMetricsResourceList(*relister_->snapshot()));
  }
  EXPECT_EQ(get("/apis/custom.metrics.k8s.io/v1beta1")["resources"].size(), 2u);  // pods, ns

  discover({"gpu_util", "gpu_temp"}, {});
  auto custom = get("/apis/custom.metrics.k8s.io/v1beta2");
  EXPECT_EQ(custom, customMetricsResourceList("v1beta2", *relister_->snapshot()));
  EXPECT_EQ(custom["resources"].size(), 4u);
  // queue_depth's series are gone, but its rule still defines it: still listed
  // (docs/api-contract.md, "Decisions: better on purpose", 11).
  auto external = get("/apis/external.metrics.k8s.io/v1beta1");
  EXPECT_EQ(external, externalMetricsResourceList(*relister_->snapshot()));
  ASSERT_EQ(external["resources"].size(), 1u);
  EXPECT_EQ(external["resources"][0]["name"], "queue_depth");
}

TEST_F(RouterDiscoveryTest, PrettyAndCompactAnswersCarryTheSameDocument) {
  discover({"gpu_util"}, {"queue_depth"});
  for (const char* path :
       {"/apis", "/apis/custom.metrics.k8s.io", "/apis/custom.metrics.k8s.io/v1beta1",
        "/apis/external.metrics.k8s.io", "/apis/external.metrics.k8s.io/v1beta1"}) {
    EXPECT_EQ(get(path), get(path, "curl/8.0")) << path;
  }
  EXPECT_EQ(get("/apis"), apiGroupList());
  EXPECT_EQ(get("/apis/custom.metrics.k8s.io"), customMetricsGroup());
  EXPECT_EQ(get("/apis/external.metrics.k8s.io"), externalMetricsGroup());
}

TEST_F(RouterDiscoveryTest, RoutersOverDifferentSnapshotsDoNotShareDocuments) {
  discover({"gpu_util"}, {});
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  auto empty = std::make_shared<const discovery::RegistrySnapshot>(rule_set);
  Router other(RouterParts{.snapshots = [empty] { return empty; }});
  server::HttpRequest request;
  request.method = "GET";
  request.target = "/apis/custom.metrics.k8s.io/v1beta1";
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(get(request.target)["resources"].size(), 2u);
    EXPECT_EQ(Json::parse(testing::routeRequest(other, request).bodyText())["resources"],
              Json::array());
  }
}

TEST_F(RouterDiscoveryTest, AggregatedDiscoveryFollowsTheSnapshotWithItsETag) {
  discover({"gpu_util"}, {"queue_depth"});
  const auto first = getAggregated();
  ASSERT_EQ(first.status, 200) << first.bodyText();
  EXPECT_EQ(first.content_type,
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(first.bodyText(),
            renderAggregatedDiscovery(servedResources(*relister_->snapshot(), {}, false),
                                      DiscoveryFormat::kAggregatedV2));
  const std::string etag = etagOf(first);
  ASSERT_EQ(etag.size(), 130u);  // a quoted SHA-512
  const auto cached = getAggregated(etag);
  EXPECT_EQ(cached.status, 304);
  EXPECT_TRUE(cached.bodyText().empty());
  EXPECT_EQ(etagOf(cached), etag);

  discover({"gpu_util", "gpu_temp"}, {"queue_depth"});  // a relist finds a metric
  const auto changed = getAggregated(etag);
  ASSERT_EQ(changed.status, 200);
  EXPECT_NE(etagOf(changed), etag);
  const Json document = Json::parse(changed.bodyText());
  for (const auto& version : document["items"][0]["versions"]) {
    std::vector<std::string> metrics;
    for (const auto& sub : version["resources"][0]["subresources"])
      metrics.push_back(sub["subresource"]);
    EXPECT_EQ(metrics, (std::vector<std::string>{"gpu_temp", "gpu_util"})) << version["version"];
  }
  EXPECT_EQ(document["items"][1]["versions"][0]["resources"][0]["resource"], "queue_depth");
}

TEST_F(RouterDiscoveryTest, TheLegacyListStaysTheAnswerToEveryOtherAccept) {
  discover({"gpu_util"}, {});
  for (const char* accept :
       {"", "application/json", "*/*", "application/vnd.kubernetes.protobuf, */*"}) {
    server::HttpRequest request;
    request.method = "GET";
    request.target = "/apis";
    if (*accept) request.headers.emplace_back("Accept", accept);
    const auto response = testing::routeRequest(router_, request);
    EXPECT_EQ(response.status, 200) << accept;
    EXPECT_EQ(response.content_type, "application/json") << accept;
    EXPECT_EQ(Json::parse(response.bodyText()), apiGroupList()) << accept;
    EXPECT_TRUE(etagOf(response).empty()) << accept;
  }
  server::HttpRequest protobuf;
  protobuf.method = "GET";
  protobuf.target = "/apis";
  protobuf.headers.emplace_back("Accept", "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(testing::routeRequest(router_, protobuf).status, 406);
}

}  // namespace
}  // namespace metrics_adapter::api
