#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/hpa/hpa_object.h"
#include "metrics_adapter/hpa/hpa_replicas.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/kube/object_lister.h"
#include "metrics_adapter/kube/rest_mapper.h"

namespace metrics_adapter::cli {

// A pod as the doctor reads it: what the replica calculator and the cause need.
struct ClusterPod {
  kube::ObjectMeta meta;
  std::string phase;
  bool ready = false;    // condition Ready is True
  bool deleted = false;  // metadata.deletionTimestamp set
  // spec.containers and the restartable init containers, with the requests that parse as
  // quantities (a request that does not parse is left out, as if missing).
  std::vector<hpa::HpaContainer> containers;
};

// The pods as the replica calculator reads them.
std::vector<hpa::HpaPod> hpaPods(const std::vector<ClusterPod>& pods);

// The scale subresource of an HPA's target: the replicas and the pod selector the controller
// reads.
struct TargetScale {
  std::int32_t spec_replicas = 0;
  std::int32_t status_replicas = 0;
  std::string selector;  // status.selector, the labelSelector the Pods requests carry
};

// Who the HPA controller is when kube-controller-manager runs with
// --use-service-account-credentials (kubeadm and most distributions do).
inline constexpr const char* kHpaControllerUser =
    "system:serviceaccount:kube-system:horizontal-pod-autoscaler";

// One APIService the HPA's metrics go through that is not Available, with the fix.
struct ApiServiceProblem {
  std::string name;     // v1beta1.custom.metrics.k8s.io
  std::string message;  // "not registered", or the Available condition's reason: message
  std::string fix;      // from docs/troubleshooting.md
};

// Reads what the doctor needs from the Kubernetes API, GETs only. Every call throws
// kube::KubeError (or std::runtime_error for an answer of the wrong shape).
class DoctorCluster {
 public:
  DoctorCluster(std::shared_ptr<kube::KubeApi> api, kube::RestMapper mapper);

  nlohmann::json hpa(const std::string& namespace_name, const std::string& name);
  // Every HPA of `namespace_name` ("" = all namespaces).
  std::vector<nlohmann::json> hpas(const std::string& namespace_name);
  TargetScale scale(const std::string& namespace_name, const hpa::ObjectRef& target);
  // The pods of `namespace_name` whose labels match `selector`, sorted by name. The selector is
  // evaluated here, by the parser the server uses.
  std::vector<ClusterPod> pods(const std::string& namespace_name, const std::string& selector);
  // The APIService `name` ("v1beta1.custom.metrics.k8s.io"), if it is registered and not
  // Available, or not registered at all; nullopt when it is Available.
  std::optional<ApiServiceProblem> apiServiceProblem(const std::string& name);
  // "namespace/name" of the Service the APIService `name` sends requests to; "" when it has
  // none (served by the kube-apiserver itself), is not registered or cannot be read.
  std::string apiServiceBackend(const std::string& name);

  // Why the HPA controller (kHpaControllerUser) may not `verb` `resource`/`subresource` of
  // `group` in `namespace_name`, from a SubjectAccessReview (a question, as `kubectl auth
  // can-i --as` asks it: it changes nothing); nullopt when it may.
  std::optional<std::string> hpaControllerDenied(
      const std::string& group, const std::string& resource, const std::string& subresource,
      const std::string& name, const std::string& namespace_name, const std::string& verb);

  // The resource of `kind` in the group of `api_version` ("apps/v1"), from the cluster's
  // discovery.
  std::optional<kube::ResourceInfo> resourceOfKind(const std::string& api_version,
                                                   const std::string& kind) const;
  const kube::RestMapper& mapper() const { return mapper_; }

 private:
  nlohmann::json get(const std::string& path);

  std::shared_ptr<kube::KubeApi> api_;
  kube::RestMapper mapper_;
};

// Serves the handler's pod listing from pods the doctor has already read, so the server's code
// answers for exactly the pods the doctor reports. Other resources list nothing.
class FixedPodLister : public kube::ObjectLister {
 public:
  explicit FixedPodLister(std::vector<kube::ObjectMeta> pods);

  std::vector<std::string> listNames(const kube::ResourceInfo& resource,
                                     const std::string& namespace_name,
                                     const promql::LabelSelector& selector) override;
  std::vector<kube::ObjectMeta> listObjects(const kube::ResourceInfo& resource,
                                            const std::string& namespace_name,
                                            const promql::LabelSelector& selector,
                                            const std::string& field_selector = "") override;

 private:
  std::vector<kube::ObjectMeta> pods_;
};

}  // namespace metrics_adapter::cli
