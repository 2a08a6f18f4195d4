#include "metrics_adapter/api/custom_metric_request.h"

#include <gtest/gtest.h>

#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {
namespace {

std::optional<CustomMetricRequest> parse(const std::string& rest_path,
                                         const std::string& method = "GET") {
  return parseCustomMetricRequest(
      server::parseRequestInfo(method, "/apis/custom.metrics.k8s.io/v1beta1/" + rest_path));
}

TEST(CustomMetricRequestTest, RoutesOfApiMdSection3) {
  struct Case {
    std::string path;
    std::string resource, namespace_name, name, metric;
  };
  const Case cases[] = {
      {"namespaces/default/pods/%2A/http_requests", "pods", "default", "*", "http_requests"},
      {"namespaces/default/pods/web-1/http_requests", "pods", "default", "web-1", "http_requests"},
      {"namespaces/default/deployments.apps/web/http_requests", "deployments.apps", "default",
       "web", "http_requests"},
      {"nodes/node-1/node_load", "nodes", "", "node-1", "node_load"},
      {"nodes/*/node_load", "nodes", "", "*", "node_load"},
      // R3: the namespace object itself is root-scoped, named by the namespace.
      {"namespaces/default/metrics/queue_length", "namespaces", "", "default", "queue_length"},
      {"namespaces/%2A/metrics/queue_length", "namespaces", "", "*", "queue_length"},
      {"namespaces/default/services/dcgm-exporter/DCGM_FI_DEV_GPU_UTIL_AVG", "services", "default",
       "dcgm-exporter", "DCGM_FI_DEV_GPU_UTIL_AVG"},
      {"namespaces/default/metrics/queue:len", "namespaces", "", "default", "queue:len"},
  };
  for (const auto& c : cases) {
    auto request = parse(c.path);
    ASSERT_TRUE(request) << c.path;
    EXPECT_EQ(request->resource, c.resource) << c.path;
    EXPECT_EQ(request->namespace_name, c.namespace_name) << c.path;
    EXPECT_EQ(request->name, c.name) << c.path;
    EXPECT_EQ(request->metric, c.metric) << c.path;
    EXPECT_EQ(request->version, "v1beta1");
  }
}

TEST(CustomMetricRequestTest, SelectorsComeFromTheQuery) {
  auto request =
      parse("namespaces/ns/pods/%2A/m?labelSelector=app%3Dweb&metricLabelSelector=a%3Db");
  ASSERT_TRUE(request);
  EXPECT_TRUE(request->wildcard());
  EXPECT_TRUE(request->namespaced());
  EXPECT_EQ(request->label_selector, "app=web");
  EXPECT_EQ(request->metric_label_selector, "a=b");
}

TEST(CustomMetricRequestTest, PathsWithoutAMetricMatchNoRoute) {
  for (const char* path : {"blah", "nodes/foo", "namespaces/default/pods/web-1", "namespaces",
                           "namespaces/ns/metrics/x/y", "a/b/c/d"}) {
    EXPECT_FALSE(parse(path)) << path;
  }
}

// Only what was authorized as a get of <resource>/<name>/<metric> is served: a watch (authorized
// as "watch nodes n1/m") was served as the metric before routes read the request attributes.
TEST(CustomMetricRequestTest, OtherVerbsMatchNoRoute) {
  EXPECT_FALSE(parse("watch/nodes/n1/node_load"));
  EXPECT_FALSE(parse("proxy/nodes/n1/node_load"));
  EXPECT_FALSE(parse("watch/namespaces/ns/pods/p/m"));
  EXPECT_FALSE(parse("nodes/n1/node_load", "POST"));
  EXPECT_TRUE(parse("nodes/n1/node_load", "HEAD"));
}

TEST(CustomMetricRequestTest, NamespaceWithThreeSegmentsIsInvalidPath) {
  try {
    parse("namespaces/default/queue_length");
    FAIL() << "accepted";
  } catch (const ApiError& error) {
    EXPECT_EQ(error.code(), 400);
    EXPECT_STREQ(error.what(), "invalid request path");
  }
}

}  // namespace
}  // namespace metrics_adapter::api
