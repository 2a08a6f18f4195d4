#include "metrics_adapter/kube/rest_mapper.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace metrics_adapter::kube {
namespace {

struct LookupCase {
  const char* group;
  const char* name;
  const char* expected_group_resource;  // nullptr: not found
};

// docs/api-contract.md "prometheus-adapter: resource association": plural, singular or kind,
// case-insensitive; no short names; an empty group picks the first group serving the name
// (core first), so `deployment` is apps and `job` is batch.
TEST(RestMapperTest, ResourceFor) {
  const RestMapper mapper = RestMapper::builtin();
  const LookupCase kCases[] = {
      {"", "pods", "pods"},
      {"", "pod", "pods"},
      {"", "Pod", "pods"},
      {"", "PODS", "pods"},
      {"", "node", "nodes"},
      {"", "namespace", "namespaces"},
      {"", "service", "services"},
      {"", "endpoints", "endpoints"},
      {"", "deployment", "deployments.apps"},
      {"apps", "deployments", "deployments.apps"},
      {"apps", "StatefulSet", "statefulsets.apps"},
      {"", "job", "jobs.batch"},
      {"", "cronjob", "cronjobs.batch"},
      {"", "ingress", "ingresses.networking.k8s.io"},
      {"networking.k8s.io", "ingresses", "ingresses.networking.k8s.io"},
      {"", "horizontalpodautoscaler", "horizontalpodautoscalers.autoscaling"},
      {"", "persistentvolumeclaim", "persistentvolumeclaims"},
      {"", "po", nullptr},        // short names are not accepted
      {"", "svc", nullptr},       //
      {"", "widgets", nullptr},   // unknown
      {"", "", nullptr},          //
      {"apps", "pods", nullptr},  // wrong group
      {"cheese.io", "brand", nullptr},
      {"networking", "ingress", nullptr},  // groups must match exactly
  };
  for (const LookupCase& c : kCases) {
    SCOPED_TRACE(std::string(c.group) + "/" + c.name);
    const std::optional<ResourceInfo> found = mapper.resourceFor(c.group, c.name);
    if (c.expected_group_resource == nullptr) {
      EXPECT_FALSE(found.has_value());
    } else {
      ASSERT_TRUE(found.has_value());
      EXPECT_EQ(found->groupResource(), c.expected_group_resource);
    }
  }
}

TEST(RestMapperTest, ParseGroupResourceSplitsAtFirstDot) {
  const RestMapper mapper = RestMapper::builtin();
  EXPECT_EQ(mapper.parseGroupResource("pods")->kind, "Pod");
  EXPECT_EQ(mapper.parseGroupResource("deployments.apps")->kind, "Deployment");
  EXPECT_EQ(mapper.parseGroupResource("ingresses.networking.k8s.io")->kind, "Ingress");
  EXPECT_EQ(mapper.parseGroupResource("deployments")->group, "apps");  // guessed, as upstream
  EXPECT_FALSE(mapper.parseGroupResource("deployments.batch").has_value());
  EXPECT_FALSE(mapper.parseGroupResource("pods.").has_value());
  EXPECT_FALSE(mapper.parseGroupResource(".apps").has_value());
  EXPECT_FALSE(mapper.parseGroupResource("").has_value());
}

// docs/api-contract.md "Metric value lists": describedObject.apiVersion is "v1" for core,
// "<group>/<version>" otherwise.
TEST(RestMapperTest, ApiVersionAndGroupResource) {
  const RestMapper mapper = RestMapper::builtin();
  const ResourceInfo pod = *mapper.resourceFor("", "pods");
  EXPECT_EQ(pod.apiVersion(), "v1");
  EXPECT_EQ(pod.groupResource(), "pods");
  EXPECT_EQ(pod.singular, "pod");
  EXPECT_TRUE(pod.namespaced);
  const ResourceInfo deployment = *mapper.resourceFor("apps", "deployment");
  EXPECT_EQ(deployment.apiVersion(), "apps/v1");
  EXPECT_EQ(deployment.groupResource(), "deployments.apps");
  const ResourceInfo ingress = *mapper.resourceFor("", "ingresses");
  EXPECT_EQ(ingress.apiVersion(), "networking.k8s.io/v1");
}

// Nodes, namespaces and persistent volumes are cluster-scoped; the rest of the table is not.
TEST(RestMapperTest, ScopeComesFromTheTable) {
  const std::set<std::string> kClusterScoped = {"nodes", "namespaces", "persistentvolumes"};
  const RestMapper mapper = RestMapper::builtin();
  EXPECT_EQ(mapper.resources().size(), 19u);
  for (const ResourceInfo& resource : mapper.resources()) {
    SCOPED_TRACE(resource.plural);
    EXPECT_EQ(resource.namespaced, !kClusterScoped.contains(resource.plural));
    EXPECT_FALSE(resource.kind.empty());
    EXPECT_FALSE(resource.singular.empty());
    EXPECT_FALSE(resource.version.empty());
  }
}

// The header's order: core, then apps, batch, autoscaling, networking.k8s.io.
TEST(RestMapperTest, CoreComesFirst) {
  const RestMapper mapper = RestMapper::builtin();
  EXPECT_EQ(mapper.resources().front().group, "");
  bool left_core = false;
  for (const ResourceInfo& resource : mapper.resources()) {
    if (!resource.group.empty()) left_core = true;
    if (left_core) {
      EXPECT_NE(resource.group, "") << resource.plural;
    }
  }
}

TEST(RestMapperTest, CustomTableGuessesInItsOwnOrder) {
  const RestMapper mapper({
      {.group = "a.example",
       .version = "v1",
       .kind = "Widget",
       .plural = "widgets",
       .singular = "widget",
       .namespaced = true},
      {.group = "b.example",
       .version = "v2",
       .kind = "Widget",
       .plural = "widgets",
       .singular = "widget",
       .namespaced = false},
  });
  EXPECT_EQ(mapper.resourceFor("", "widget")->group, "a.example");
  EXPECT_EQ(mapper.resourceFor("b.example", "widget")->version, "v2");
  EXPECT_EQ(mapper.parseGroupResource("widgets.b.example")->apiVersion(), "b.example/v2");
}

}  // namespace
}  // namespace metrics_adapter::kube
