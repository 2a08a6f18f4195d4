#include "metrics_adapter/kube/rest_mapper.h"

#include <utility>

#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::kube {
namespace {

ResourceInfo info(std::string group, std::string version, std::string kind, std::string plural,
                  std::string singular, bool namespaced) {
  return ResourceInfo{.group = std::move(group),
                      .version = std::move(version),
                      .kind = std::move(kind),
                      .plural = std::move(plural),
                      .singular = std::move(singular),
                      .namespaced = namespaced};
}

}  // namespace

std::string ResourceInfo::groupResource() const {
  return group.empty() ? plural : plural + "." + group;
}

std::string ResourceInfo::apiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

RestMapper::RestMapper(std::vector<ResourceInfo> resources) : resources_(std::move(resources)) {}

RestMapper RestMapper::builtin() {
  // Singular names are what API discovery reports (Endpoints is "endpoints" both ways).
  return RestMapper({
      info("", "v1", "Pod", "pods", "pod", true),
      info("", "v1", "Node", "nodes", "node", false),
      info("", "v1", "Namespace", "namespaces", "namespace", false),
      info("", "v1", "Service", "services", "service", true),
      info("", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", false),
      info("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim",
           true),
      info("", "v1", "Endpoints", "endpoints", "endpoints", true),
      info("", "v1", "ConfigMap", "configmaps", "configmap", true),
      info("", "v1", "Secret", "secrets", "secret", true),
      info("", "v1", "ReplicationController", "replicationcontrollers", "replicationcontroller",
           true),
      info("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", true),
      info("apps", "v1", "Deployment", "deployments", "deployment", true),
      info("apps", "v1", "StatefulSet", "statefulsets", "statefulset", true),
      info("apps", "v1", "DaemonSet", "daemonsets", "daemonset", true),
      info("apps", "v1", "ReplicaSet", "replicasets", "replicaset", true),
      info("batch", "v1", "Job", "jobs", "job", true),
      info("batch", "v1", "CronJob", "cronjobs", "cronjob", true),
      info("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
           "horizontalpodautoscaler", true),
      info("networking.k8s.io", "v1", "Ingress", "ingresses", "ingress", true),
  });
}

std::optional<ResourceInfo> RestMapper::resourceFor(std::string_view group,
                                                    std::string_view name) const {
  if (name.empty()) return std::nullopt;
  for (const ResourceInfo& resource : resources_) {
    if (!group.empty() && resource.group != group) continue;
    if (text::equalsIgnoringAsciiCase(name, resource.plural) ||
        text::equalsIgnoringAsciiCase(name, resource.singular) ||
        text::equalsIgnoringAsciiCase(name, resource.kind)) {
      return resource;
    }
  }
  return std::nullopt;
}

std::optional<ResourceInfo> RestMapper::parseGroupResource(std::string_view segment) const {
  const std::size_t dot = segment.find('.');
  if (dot == std::string_view::npos) return resourceFor("", segment);
  const std::string_view group = segment.substr(dot + 1);
  if (group.empty()) return std::nullopt;
  return resourceFor(group, segment.substr(0, dot));
}

}  // namespace metrics_adapter::kube
