#include "metrics_adapter/server/request_info.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <string>
#include <vector>

namespace metrics_adapter::server {

namespace {

constexpr const char* kCustom = "/apis/custom.metrics.k8s.io/v1beta1/";
constexpr const char* kCustomV2 = "/apis/custom.metrics.k8s.io/v1beta2/";
constexpr const char* kExternal = "/apis/external.metrics.k8s.io/v1beta1/";
constexpr const char* kResourceMetrics = "/apis/metrics.k8s.io/v1beta1/";

struct Resource {
  std::string verb;
  std::string path;
  std::string group;
  std::string version;
  std::string namespace_name;
  std::string resource;
  std::string name;
  std::string subresource;
};

// The attributes authorization reads (and the router serves from).
struct Attributes {
  bool resource_request = false;
  std::string verb;
  std::string path;
  std::string api_group;
  std::string api_version;
  std::string namespace_name;
  std::string resource;
  std::string subresource;
  std::string name;

  bool operator==(const Attributes&) const = default;
};

void PrintTo(const Attributes& a, std::ostream* os) {
  *os << (a.resource_request ? "resource" : "non-resource") << " verb=" << a.verb
      << " path=" << a.path << " group=" << a.api_group << " version=" << a.api_version
      << " namespace=" << a.namespace_name << " resource=" << a.resource << " name=" << a.name
      << " subresource=" << a.subresource;
}

Attributes attributesOf(const RequestInfo& info) {
  return {info.resource_request, info.verb,     info.path,        info.api_group, info.api_version,
          info.namespace_name,   info.resource, info.subresource, info.name};
}

Attributes requestAttributes(std::string_view method, std::string_view target) {
  return attributesOf(parseRequestInfo(method, target));
}

Attributes resource(const Resource& r) {
  return {true,       r.verb,        r.path, r.group, r.version, r.namespace_name,
          r.resource, r.subresource, r.name};
}

Attributes nonResource(std::string verb, std::string path) {
  Attributes attributes;
  attributes.verb = std::move(verb);
  attributes.path = std::move(path);
  return attributes;
}

struct Case {
  std::string label;
  std::string method;
  std::string target;
  Attributes expected;
};

std::string custom(const std::string& rest) { return kCustom + rest; }

// Rows of docs/api-contract.md "Request attributes (RequestInfo)" (the table "Applied to this
// API"), then the rules of its steps 1-5 and of docs/api-contract.md "URL decoding" on the edges
// of the URL space.
std::vector<Case> cases() {
  const std::string cm = "custom.metrics.k8s.io";
  const std::string em = "external.metrics.k8s.io";
  const std::string rm = "metrics.k8s.io";
  return {
      // The "Applied to this API" table, with the '*' as client-go sends it (%2A,
      // docs/api-contract.md "URL decoding").
      {"pods wildcard", "GET", std::string(kCustomV2) + "namespaces/default/pods/%2A/http_requests",
       resource({"get", std::string(kCustomV2) + "namespaces/default/pods/*/http_requests", cm,
                 "v1beta2", "default", "pods", "*", "http_requests"})},
      {"pods by name", "GET", custom("namespaces/default/pods/web-1/http_requests"),
       resource({"get", custom("namespaces/default/pods/web-1/http_requests"), cm, "v1beta1",
                 "default", "pods", "web-1", "http_requests"})},
      {"group resource", "GET", custom("namespaces/default/deployments.apps/web/http_requests"),
       resource({"get", custom("namespaces/default/deployments.apps/web/http_requests"), cm,
                 "v1beta1", "default", "deployments.apps", "web", "http_requests"})},
      {"node by name", "GET", custom("nodes/node-1/node_load"),
       resource({"get", custom("nodes/node-1/node_load"), cm, "v1beta1", "", "nodes", "node-1",
                 "node_load"})},
      {"nodes wildcard", "GET", custom("nodes/%2A/node_load"),
       resource(
           {"get", custom("nodes/*/node_load"), cm, "v1beta1", "", "nodes", "*", "node_load"})},
      {"nodes literal wildcard", "GET", custom("nodes/*/node_load"),
       resource(
           {"get", custom("nodes/*/node_load"), cm, "v1beta1", "", "nodes", "*", "node_load"})},
      {"namespace metric is the pseudo-resource metrics", "GET",
       custom("namespaces/default/metrics/queue_length"),
       resource({"get", custom("namespaces/default/metrics/queue_length"), cm, "v1beta1", "default",
                 "metrics", "queue_length", ""})},
      {"namespace metric wildcard", "GET", custom("namespaces/%2A/metrics/queue_length"),
       resource({"get", custom("namespaces/*/metrics/queue_length"), cm, "v1beta1", "*", "metrics",
                 "queue_length", ""})},
      {"external metric is a list without a name", "GET",
       std::string(kExternal) + "namespaces/default/queue_messages_ready",
       resource({"list", std::string(kExternal) + "namespaces/default/queue_messages_ready", em,
                 "v1beta1", "default", "queue_messages_ready", "", ""})},
      {"resource metrics pod list", "GET",
       std::string(kResourceMetrics) + "namespaces/default/pods",
       resource({"list", std::string(kResourceMetrics) + "namespaces/default/pods", rm, "v1beta1",
                 "default", "pods", "", ""})},
      {"resource metrics node", "GET", std::string(kResourceMetrics) + "nodes/node-1",
       resource({"get", std::string(kResourceMetrics) + "nodes/node-1", rm, "v1beta1", "", "nodes",
                 "node-1", ""})},

      // Step 1: fewer than 3 parts, or not under api/apis: a path.
      {"healthz", "GET", "/healthz", nonResource("get", "/healthz")},
      {"healthz check", "GET", "/healthz/ping", nonResource("get", "/healthz/ping")},
      {"root", "GET", "/", nonResource("get", "/")},
      {"api", "GET", "/api", nonResource("get", "/api")},
      {"api version", "GET", "/api/v1", nonResource("get", "/api/v1")},
      {"openapi", "GET", "/openapi/v2", nonResource("get", "/openapi/v2")},
      {"three parts not under apis", "GET", "/metrics/a/b", nonResource("get", "/metrics/a/b")},
      // Step 2: discovery documents are paths, with or without a trailing slash
      // (docs/api-contract.md "URL decoding").
      {"apis", "GET", "/apis", nonResource("get", "/apis")},
      {"apis slash", "GET", "/apis/", nonResource("get", "/apis/")},
      {"group", "GET", "/apis/custom.metrics.k8s.io",
       nonResource("get", "/apis/custom.metrics.k8s.io")},
      {"group version", "GET", "/apis/custom.metrics.k8s.io/v1beta1",
       nonResource("get", "/apis/custom.metrics.k8s.io/v1beta1")},
      {"group version slash", "GET", "/apis/custom.metrics.k8s.io/v1beta1/",
       nonResource("get", "/apis/custom.metrics.k8s.io/v1beta1/")},
      {"external group version", "GET", "/apis/external.metrics.k8s.io/v1beta1?timeout=32s",
       nonResource("get", "/apis/external.metrics.k8s.io/v1beta1")},
      {"non-resource verb is the lower-case method", "POST", "/apis", nonResource("post", "/apis")},

      // The core group "api" has no group part.
      {"core group list", "GET", "/api/v1/namespaces/default/pods",
       resource({"list", "/api/v1/namespaces/default/pods", "", "v1", "default", "pods", "", ""})},

      // Query strings never change the path; labelSelector does not make a list a get.
      {"C13 target", "GET",
       custom("namespaces/default/pods/%2A/http_requests_per_second?labelSelector=app%3Dweb"),
       resource({"get", custom("namespaces/default/pods/*/http_requests_per_second"), cm, "v1beta1",
                 "default", "pods", "*", "http_requests_per_second"})},
      {"C39 target", "GET",
       std::string(kExternal) +
           "namespaces/default/queue_messages_ready?labelSelector=queue%3Dorders",
       resource({"list", std::string(kExternal) + "namespaces/default/queue_messages_ready", em,
                 "v1beta1", "default", "queue_messages_ready", "", ""})},
      // Step 5: a nameless get is a watch when watch is set to anything but 0/false.
      {"watch=true", "GET", std::string(kResourceMetrics) + "pods?watch=true",
       resource(
           {"watch", std::string(kResourceMetrics) + "pods", rm, "v1beta1", "", "pods", "", ""})},
      {"watch without value", "GET", std::string(kResourceMetrics) + "pods?a=b&watch",
       resource(
           {"watch", std::string(kResourceMetrics) + "pods", rm, "v1beta1", "", "pods", "", ""})},
      {"watch=FALSE", "GET", std::string(kResourceMetrics) + "pods?watch=FALSE",
       resource(
           {"list", std::string(kResourceMetrics) + "pods", rm, "v1beta1", "", "pods", "", ""})},
      {"watch=0", "GET", std::string(kResourceMetrics) + "pods?watch=0",
       resource(
           {"list", std::string(kResourceMetrics) + "pods", rm, "v1beta1", "", "pods", "", ""})},
      {"first watch value wins", "GET", std::string(kResourceMetrics) + "pods?watch=0&watch=1",
       resource(
           {"list", std::string(kResourceMetrics) + "pods", rm, "v1beta1", "", "pods", "", ""})},
      {"watch on a named get is ignored", "GET", custom("nodes/node-1/node_load?watch=true"),
       resource({"get", custom("nodes/node-1/node_load"), cm, "v1beta1", "", "nodes", "node-1",
                 "node_load"})},
      // Step 3: HEAD is get; the namespace prefix is kept for namespace subresources.
      {"HEAD", "HEAD", custom("nodes/node-1/node_load"),
       resource({"get", custom("nodes/node-1/node_load"), cm, "v1beta1", "", "nodes", "node-1",
                 "node_load"})},
      {"namespace object", "GET", custom("namespaces/default"),
       resource({"get", custom("namespaces/default"), cm, "v1beta1", "default", "namespaces",
                 "default", ""})},
      {"namespace status subresource", "GET", custom("namespaces/default/status"),
       resource({"get", custom("namespaces/default/status"), cm, "v1beta1", "default", "namespaces",
                 "default", "status"})},
      {"namespaces list", "GET", custom("namespaces"),
       resource({"list", custom("namespaces"), cm, "v1beta1", "", "namespaces", "", ""})},
      // docs/api-contract.md "Custom metrics routes": three segments under namespaces/ is
      // namespace + resource, not a namespace metric.
      {"R1 namespaces form", "GET", custom("namespaces/default/queue_length"),
       resource({"list", custom("namespaces/default/queue_length"), cm, "v1beta1", "default",
                 "queue_length", "", ""})},
      {"five segments", "GET", custom("namespaces/ns/metrics/x/y"),
       resource(
           {"get", custom("namespaces/ns/metrics/x/y"), cm, "v1beta1", "ns", "metrics", "x", "y"})},
      {"encoded colon and space", "GET", custom("nodes/a%20b/queue%3Alen"),
       resource(
           {"get", custom("nodes/a b/queue:len"), cm, "v1beta1", "", "nodes", "a b", "queue:len"})},
      {"plus stays plus in paths", "GET", custom("nodes/a+b/m"),
       resource({"get", custom("nodes/a+b/m"), cm, "v1beta1", "", "nodes", "a+b", "m"})},
      // Other methods map as upstream; special verbs come before the resource.
      {"POST", "POST", custom("nodes/node-1/node_load"),
       resource({"create", custom("nodes/node-1/node_load"), cm, "v1beta1", "", "nodes", "node-1",
                 "node_load"})},
      {"DELETE collection", "DELETE", custom("nodes"),
       resource({"deletecollection", custom("nodes"), cm, "v1beta1", "", "nodes", "", ""})},
      {"unknown method", "OPTIONS", custom("nodes/n/m"),
       resource({"", custom("nodes/n/m"), cm, "v1beta1", "", "nodes", "n", "m"})},
      {"watch verb prefix", "GET", std::string(kResourceMetrics) + "watch/namespaces/default/pods",
       resource({"watch", std::string(kResourceMetrics) + "watch/namespaces/default/pods", rm,
                 "v1beta1", "default", "pods", "", ""})},
      {"proxy has no subresource", "GET", custom("proxy/nodes/n/a/b"),
       resource({"proxy", custom("proxy/nodes/n/a/b"), cm, "v1beta1", "", "nodes", "n", ""})},
      {"special verb alone is a path", "GET", custom("watch"), nonResource("get", custom("watch"))},
  };
}

class RequestInfoTest : public ::testing::TestWithParam<Case> {};

TEST_P(RequestInfoTest, ParsesLikeUpstreamRequestInfo) {
  const Case& c = GetParam();
  EXPECT_EQ(requestAttributes(c.method, c.target), c.expected) << c.method << " " << c.target;
}

INSTANTIATE_TEST_SUITE_P(Table, RequestInfoTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = std::to_string(info.index) + "_";
                           for (char c : info.param.label) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

// Parsing into a RequestInfo that held another request (as the request pipeline does on every
// thread) gives exactly what parsing into a new one gives: nothing of the request before stays.
TEST(RequestInfoTest, ParsingIntoAUsedRequestInfoKeepsNothingOfTheOneBefore) {
  std::vector<std::pair<std::string, std::string>> requests;
  for (const Case& c : cases()) requests.emplace_back(c.method, c.target);
  requests.emplace_back("GET", custom("namespaces/a/pods/%2A/m?labelSelector=app%3Dx&watch=1"));
  requests.emplace_back("GET", "/apis/custom.metrics.k8s.io/v1beta1");
  requests.emplace_back("GET", "/");
  const auto same = [](const RequestInfo& a, const RequestInfo& b) {
    return a.path == b.path && a.parts == b.parts && a.query == b.query &&
           a.resource_request == b.resource_request && a.verb == b.verb &&
           a.api_group == b.api_group && a.api_version == b.api_version &&
           a.namespace_name == b.namespace_name && a.resource == b.resource && a.name == b.name &&
           a.subresource == b.subresource && a.resource_parts == b.resource_parts;
  };
  RequestInfo reused;
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [method, target] : requests) {
      parseRequestInfo(method, target, reused);
      EXPECT_TRUE(same(reused, parseRequestInfo(method, target))) << method << " " << target;
    }
    std::reverse(requests.begin(), requests.end());
  }
}

TEST(RequestInfoTest, InvalidUtf8AndNulBytesAreKeptAsData) {
  const auto attributes = requestAttributes("GET", custom("nodes/%FF%00/m"));
  EXPECT_TRUE(attributes.resource_request);
  EXPECT_EQ(attributes.name, std::string("\xFF\0", 2));
}

// Targets whose segments are ambiguous are refused (400) before authorization sees them, so
// that authorization and routing cannot read them differently: before one parse, "n1//m" was
// authorized as a list of nodes and served as the metric m of node n1.
TEST(RequestInfoTest, AmbiguousTargetsAreRefused) {
  for (const std::string& bad : std::vector<std::string>{
           custom("nodes/n1//node_load"), custom("nodes//node_load"),
           std::string("//apis/custom.metrics.k8s.io/v1beta1"), std::string("//"), "///",
           custom("nodes/./node_load"), custom("nodes/%2E%2E/node_load"), custom("nodes/n1/../m"),
           custom("nodes%2Fnode-1/node_load"), custom("nodes/a%2fb/m"), custom("nodes/%2/m?x=1"),
           custom("nodes/a%"), custom("nodes/n/m?labelSelector=%G0"), std::string(""),
           std::string("apis/x/y/z"), std::string("*")}) {
    EXPECT_THROW(parseRequestInfo("GET", bad), InvalidRequestTarget) << bad;
  }
}

TEST(RequestInfoTest, OneTrailingSlashIsAllowed) {
  const auto info = parseRequestInfo("GET", "/apis/custom.metrics.k8s.io/v1beta1/");
  EXPECT_EQ(info.parts, (std::vector<std::string>{"apis", "custom.metrics.k8s.io", "v1beta1"}));
  EXPECT_TRUE(parseRequestInfo("GET", "/").parts.empty());
}

TEST(RequestInfoTest, DecodesTheHpaWildcardAndFormEncodedSelectors) {
  // The query string exactly as the aggregator forwards it.
  const auto info = parseRequestInfo(
      "GET",
      "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/duty_cycle_current"
      "?labelSelector=app%3Dfoo%2Ctier+in+%28a%2Cb%29%2C%21legacy&metricLabelSelector=verb%3DGET");
  EXPECT_EQ(info.path,
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/duty_cycle_current");
  EXPECT_EQ(info.name, "*");
  EXPECT_EQ(info.resource_parts, (std::vector<std::string>{"pods", "*", "duty_cycle_current"}));
  EXPECT_EQ(info.get("labelSelector"), "app=foo,tier in (a,b),!legacy");
  EXPECT_EQ(info.get("metricLabelSelector"), "verb=GET");
  EXPECT_FALSE(info.has("pretty"));
}

TEST(RequestInfoTest, FirstRepeatedParameterWinsAndSemicolonPairsAreSkipped) {
  const auto info =
      parseRequestInfo("GET", "/x?labelSelector=app%3Dweb&labelSelector=app%3Dother&a=1;b=2");
  EXPECT_EQ(info.get("labelSelector"), "app=web");
  EXPECT_FALSE(info.has("a"));
}

TEST(RequestInfoTest, PlusIsLiteralInPathsAndSpaceInQueries) {
  const auto info = parseRequestInfo("GET", "/a+b?q=a+b&flag");
  EXPECT_EQ(info.parts[0], "a+b");
  EXPECT_EQ(info.get("q"), "a b");
  EXPECT_TRUE(info.has("flag"));
  EXPECT_EQ(info.get("flag"), "");
}

}  // namespace
}  // namespace metrics_adapter::server
