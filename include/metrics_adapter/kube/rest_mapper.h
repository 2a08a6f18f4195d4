#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::kube {

// What the REST mapping knows about one resource.
struct ResourceInfo {
  std::string group;     // "" for core
  std::string version;   // "v1"
  std::string kind;      // "Pod"
  std::string plural;    // "pods"
  std::string singular;  // "pod"
  bool namespaced = true;

  bool operator==(const ResourceInfo&) const = default;

  // "pods" for core, "deployments.apps" otherwise (the URL segment and discovery prefix).
  std::string groupResource() const;
  // "v1" for core (upstream emits "/v1"; see api docs), "apps/v1" otherwise.
  std::string apiVersion() const;
};

// Maps names to resources. Immutable; thread-safe.
class RestMapper {
 public:
  explicit RestMapper(std::vector<ResourceInfo> resources);

  // The built-in table: the core and apps/batch resources (pods, nodes, namespaces, services,
  // persistentvolumes, persistentvolumeclaims, endpoints, configmaps, secrets,
  // replicationcontrollers, serviceaccounts, deployments/statefulsets/daemonsets/replicasets
  // (apps), jobs/cronjobs (batch), ingresses (networking.k8s.io),
  // horizontalpodautoscalers (autoscaling)), in discovery priority order (core first).
  static RestMapper builtin();

  // Resolves `name` (plural, singular or kind; case-insensitive; short names not accepted).
  // Empty `group` matches any group, first in priority order (upstream "guessing").
  std::optional<ResourceInfo> resourceFor(std::string_view group, std::string_view name) const;

  // Parses a URL segment "resource" or "resource.group" (split at the first dot).
  std::optional<ResourceInfo> parseGroupResource(std::string_view segment) const;

  const std::vector<ResourceInfo>& resources() const { return resources_; }

 private:
  std::vector<ResourceInfo> resources_;
};

}  // namespace metrics_adapter::kube
