#include "audit/policy.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "unit/net/test_support.h"

namespace metrics_adapter::audit {
namespace {

constexpr const char* kPolicy = R"(apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
  - level: None
    nonResourceURLs: ["/healthz", "/readyz*"]
  - level: RequestResponse
    userGroups: ["auditors"]
    resources:
      - group: custom.metrics.k8s.io
        resources: ["pods/*"]
  - level: Request
    verbs: ["list"]
    namespaces: ["team-a"]
  - level: Metadata
    resources:
      - group: custom.metrics.k8s.io
        resources: ["*/gpu_util"]
        resourceNames: ["web-0"]
      - group: external.metrics.k8s.io
        resources: ["queue_length"]
    omitStages: [ResponseComplete]
  - level: Request
    resources:
      - group: metrics.k8s.io
  - level: Metadata
    namespaces: [""]
  - level: RequestResponse
    nonResourceURLs: ["/apis/*"]
)";

struct Attributes {
  std::string user = "system:serviceaccount:kube-system:horizontal-pod-autoscaler";
  std::vector<std::string> groups{"system:serviceaccounts"};
  std::string verb = "get";
  bool resource = true;
  std::string group;
  std::string ns;
  std::string res;
  std::string sub;
  std::string name;
  std::string path;
};

TEST(PolicyTest, FirstMatchingRuleDecides) {
  const Policy policy = parsePolicy(kPolicy, "policy.yaml");
  ASSERT_EQ(policy.rules.size(), 8u);
  const auto received = static_cast<StageSet>(Stage::kRequestReceived);
  const auto complete = static_cast<StageSet>(Stage::kResponseComplete);
  struct Case {
    std::string name;
    Attributes a;
    Level level;
    StageSet omit;
  };
  const auto pod = [](std::string user, std::vector<std::string> groups, std::string sub,
                      std::string name) {
    Attributes a;
    a.user = std::move(user);
    a.groups = std::move(groups);
    a.group = "custom.metrics.k8s.io";
    a.ns = "default";
    a.res = "pods";
    a.sub = std::move(sub);
    a.name = std::move(name);
    return a;
  };
  Attributes proxy = pod("system:kube-proxy", {"auditors"}, "gpu_util", "web-0");
  Attributes health;
  health.resource = false;
  health.path = "/healthz";
  Attributes ready = health;
  ready.path = "/readyz/ping";
  Attributes healthz_sub = health;
  healthz_sub.path = "/healthz/etcd";  // exact match only
  Attributes list_team_a = pod("u", {}, "gpu_util", "*");
  list_team_a.verb = "list";
  list_team_a.ns = "team-a";
  Attributes list_team_b = list_team_a;
  list_team_b.ns = "team-b";
  list_team_b.sub = "memory";
  Attributes external;
  external.group = "external.metrics.k8s.io";
  external.ns = "default";
  external.res = "queue_length";
  Attributes node_metrics;
  node_metrics.group = "metrics.k8s.io";
  node_metrics.res = "nodes";
  Attributes cluster_scoped;
  cluster_scoped.group = "custom.metrics.k8s.io";
  cluster_scoped.res = "namespaces";
  cluster_scoped.sub = "queue";
  cluster_scoped.name = "default";
  Attributes discovery;
  discovery.resource = false;
  discovery.path = "/apis/custom.metrics.k8s.io/v1beta2";
  Attributes unknown_user = pod("", {"auditors"}, "gpu_util", "web-1");
  const std::vector<Case> cases = {
      {"users", proxy, Level::kNone, received},
      {"nonResourceURLs exact", health, Level::kNone, received},
      {"nonResourceURLs prefix", ready, Level::kNone, received},
      {"nonResourceURLs no prefix without *", healthz_sub, Level::kNone, received},
      {"userGroups and pods/*", pod("alice", {"x", "auditors"}, "gpu_util", "web-0"),
       Level::kRequestResponse, received},
      {"pods/* matches pods itself, as upstream", pod("alice", {"auditors"}, "", "web-0"),
       Level::kRequestResponse, received},
      {"no rule for a plain pod read", pod("bob", {}, "", "web-0"), Level::kNone, received},
      {"verbs and namespaces", list_team_a, Level::kRequest, received},
      {"*/gpu_util with resourceNames", pod("bob", {}, "gpu_util", "web-0"), Level::kMetadata,
       received | complete},
      {"resourceNames not matching", pod("bob", {}, "gpu_util", "web-1"), Level::kNone, received},
      {"other subresource", list_team_b, Level::kNone, received},
      {"group with resource list", external, Level::kMetadata, received | complete},
      {"group without resources", node_metrics, Level::kRequest, received},
      {"namespaces [\"\"] is cluster-scoped", cluster_scoped, Level::kMetadata, received},
      {"resource rule skips non-resource", discovery, Level::kRequestResponse, received},
      {"unknown user matches no userGroups", unknown_user, Level::kNone, received},
  };
  for (const Case& c : cases) {
    RequestAttributes attributes;
    attributes.user = c.a.user;
    attributes.groups = &c.a.groups;
    attributes.verb = c.a.verb;
    attributes.resource_request = c.a.resource;
    attributes.api_group = c.a.group;
    attributes.namespace_name = c.a.ns;
    attributes.resource = c.a.res;
    attributes.subresource = c.a.sub;
    attributes.name = c.a.name;
    attributes.path = c.a.path;
    const PolicyDecision decision = evaluatePolicy(policy, attributes);
    EXPECT_EQ(decision.level, c.level) << c.name;
    if (decision.level != Level::kNone) {
      EXPECT_EQ(decision.omit_stages, c.omit) << c.name;
    }
  }
}

TEST(PolicyTest, NoRulesAuditsNothingAndV1beta1IsAccepted) {
  const Policy empty = parsePolicy("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\n", "p");
  RequestAttributes attributes;
  attributes.verb = "get";
  EXPECT_EQ(evaluatePolicy(empty, attributes).level, Level::kNone);
  const Policy all =
      parsePolicy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n", "p");
  EXPECT_EQ(evaluatePolicy(all, attributes).level, Level::kMetadata);
}

TEST(PolicyTest, BadPoliciesNameFileRuleAndField) {
  const std::string head = "apiVersion: audit.k8s.io/v1\nkind: Policy\n";
  struct Case {
    std::string yaml;
    std::string message;
  };
  const std::vector<Case> cases = {
      {head + "rules:\n- level: Metadata\n- level: Full\n",
       "p.yaml: rules[1].level: unknown level \"Full\""},
      {head + "rules:\n- level: Metadata\n  user: [a]\n", "p.yaml: rules[0].user: unknown field"},
      {head + "rules:\n- level: Metadata\n  omitStages: [Done]\n",
       "p.yaml: rules[0].omitStages[0]: unknown stage \"Done\""},
      {head + "omitStages: [RequestReceived, Later]\n", "p.yaml: omitStages[1]: unknown stage"},
      {head + "rules:\n- users: [a]\n", "p.yaml: rules[0].level: is required"},
      {head + "rules:\n- level: None\n  resources:\n  - group: \"\"\n    resourcez: [pods]\n",
       "p.yaml: rules[0].resources[0].resourcez: unknown field"},
      {head + "rules:\n- level: None\n  resources:\n  - resourceNames: [a]\n",
       "p.yaml: rules[0].resources[0].resourceNames: using resourceNames requires"},
      {head + "rules:\n- level: None\n  nonResourceURLs: [healthz]\n",
       "p.yaml: rules[0].nonResourceURLs[0]: must start with \"/\""},
      {head + "rules:\n- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n",
       "p.yaml: rules[0].nonResourceURLs: rules cannot apply to both"},
      {"apiVersion: audit.k8s.io/v2\nkind: Policy\n", "p.yaml: apiVersion: unsupported"},
      {"apiVersion: audit.k8s.io/v1\nkind: Config\n", "p.yaml: kind: must be Policy"},
      {head + "rulez: []\n", "p.yaml: rulez: unknown field"},
      {head + "rules: [\n", "p.yaml: line "},
  };
  for (const Case& c : cases) {
    try {
      parsePolicy(c.yaml, "p.yaml");
      ADD_FAILURE() << "accepted: " << c.yaml;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(c.message, 0), 0u) << e.what();
    }
  }
}

TEST(PolicyTest, LoadPolicyNamesAnUnreadableFile) {
  net::testing::TempDir dir;
  const std::string missing = dir.file("missing.yaml");
  try {
    loadPolicy(missing);
    ADD_FAILURE() << "loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
  }
  const std::string good =
      dir.write("p.yaml", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n");
  EXPECT_EQ(loadPolicy(good).rules.size(), 1u);
}

}  // namespace
}  // namespace metrics_adapter::audit
