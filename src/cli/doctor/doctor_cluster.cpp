#include "cli/doctor/doctor_cluster.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "metrics_adapter/promql/label_selector.h"
#include "metrics_adapter/promql/quantity.h"
#include "metrics_adapter/text/percent_encoding.h"

namespace metrics_adapter::cli {
namespace {

using nlohmann::json;

constexpr std::chrono::seconds kDoctorCallTimeout{10};
constexpr std::string_view kDoctorAccept = "application/json";

std::string jsonText(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The rows of docs/troubleshooting.md's "APIService not Available" table, matched on the
// condition's message.
std::string apiServiceFix(const std::string& message) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kFixes{{
      {"have no addresses",
       "no adapter pod is ready: kubectl -n custom-metrics get pods (CrashLoopBackOff with "
       "\"invalid configuration\": metrics-adapter check-config names the field)"},
      {"MissingEndpoints", "no adapter pod is ready: kubectl -n custom-metrics get pods"},
      {"unknown authority",
       "the APIService's caBundle is not the CA of the serving certificate: apply both "
       "together (kubectl apply -k deploy/)"},
      {"certificate is valid for",
       "the certificate names another Service or namespace: certs/make-certs.sh --namespace NS "
       "--service NAME, then apply"},
      {"40",
       "the adapter does not trust the aggregator's front-proxy certificate: the RoleBinding "
       "metrics-adapter-auth-reader in kube-system must grant it "
       "extension-apiserver-authentication"},
      {"refused",
       "the kube-apiserver cannot reach the pod on 6443: a NetworkPolicy, or a firewall from "
       "the control plane to the nodes"},
      {"deadline exceeded",
       "the kube-apiserver cannot reach the pod on 6443: a NetworkPolicy, or a firewall from "
       "the control plane to the nodes"},
  }};
  for (const auto& [needle, fix] : kFixes) {
    if (message.find(needle) != std::string::npos) return std::string(fix);
  }
  return "see docs/troubleshooting.md, \"APIService not Available\"";
}

bool podReady(const json& status) {
  const json conditions = status.is_object() ? status.value("conditions", json::array()) : json();
  for (const auto& condition : conditions) {
    if (jsonText(condition, "type") == "Ready") return jsonText(condition, "status") == "True";
  }
  return false;
}

std::map<std::string, std::string> labelsOf(const json& metadata) {
  std::map<std::string, std::string> labels;
  if (!metadata.is_object() || !metadata.contains("labels") || !metadata["labels"].is_object()) {
    return labels;
  }
  for (const auto& [key, value] : metadata["labels"].items()) {
    if (value.is_string()) labels[key] = value.get<std::string>();
  }
  return labels;
}

hpa::HpaContainer containerRequests(const json& container) {
  hpa::HpaContainer result{jsonText(container, "name"), {}};
  const json resources = container.value("resources", json::object());
  const json requests =
      resources.is_object() ? resources.value("requests", json::object()) : json::object();
  if (!requests.is_object()) return result;
  for (const auto& [resource, quantity] : requests.items()) {
    if (!quantity.is_string()) continue;
    if (auto milli = promql::parseMilliQuantity(quantity.get<std::string>())) {
      result.requests_milli[resource] = *milli;
    }
  }
  return result;
}

// The containers whose requests the HPA controller sums (v1.29+): every container, and the
// init containers that keep running beside them (sidecars, restartPolicy Always).
std::vector<hpa::HpaContainer> podContainers(const json& spec) {
  std::vector<hpa::HpaContainer> containers;
  if (!spec.is_object()) return containers;
  for (const auto& container : spec.value("containers", json::array())) {
    containers.push_back(containerRequests(container));
  }
  for (const auto& container : spec.value("initContainers", json::array())) {
    if (jsonText(container, "restartPolicy") == "Always") {
      containers.push_back(containerRequests(container));
    }
  }
  return containers;
}

bool doctorSelectorMatches(const promql::LabelSelector& selector, const kube::ObjectMeta& object,
                           const std::string& namespace_name) {
  return (namespace_name.empty() || object.namespace_name == namespace_name) &&
         promql::matches(selector, object.labels);
}

}  // namespace

std::vector<hpa::HpaPod> hpaPods(const std::vector<ClusterPod>& pods) {
  std::vector<hpa::HpaPod> result;
  result.reserve(pods.size());
  for (const auto& pod : pods) {
    result.push_back({pod.meta.name, pod.phase, pod.deleted, pod.ready, pod.containers});
  }
  return result;
}

DoctorCluster::DoctorCluster(std::shared_ptr<kube::KubeApi> api, kube::RestMapper mapper)
    : api_(std::move(api)), mapper_(std::move(mapper)) {}

json DoctorCluster::get(const std::string& path) {
  return api_->get(path, kDoctorAccept, kDoctorCallTimeout);
}

json DoctorCluster::hpa(const std::string& namespace_name, const std::string& name) {
  return get("/apis/autoscaling/v2/namespaces/" + text::percentEncode(namespace_name) +
             "/horizontalpodautoscalers/" + text::percentEncode(name));
}

std::vector<json> DoctorCluster::hpas(const std::string& namespace_name) {
  const std::string path = namespace_name.empty() ? "/apis/autoscaling/v2/horizontalpodautoscalers"
                                                  : "/apis/autoscaling/v2/namespaces/" +
                                                        text::percentEncode(namespace_name) +
                                                        "/horizontalpodautoscalers";
  json list = get(path);
  std::vector<json> items;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    throw std::runtime_error(path + ": the answer is not a list");
  }
  for (auto& item : list["items"]) {
    // A LIST's items carry no kind/apiVersion; parseHpa reads them.
    item["kind"] = "HorizontalPodAutoscaler";
    item["apiVersion"] = "autoscaling/v2";
    items.push_back(std::move(item));
  }
  return items;
}

std::optional<kube::ResourceInfo> DoctorCluster::resourceOfKind(const std::string& api_version,
                                                                const std::string& kind) const {
  const auto slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  for (const auto& resource : mapper_.resources()) {
    if (resource.group == group && resource.kind == kind) return resource;
  }
  return std::nullopt;
}

TargetScale DoctorCluster::scale(const std::string& namespace_name, const hpa::ObjectRef& target) {
  const auto resource = resourceOfKind(target.api_version, target.kind);
  if (!resource) {
    throw std::runtime_error("the scale target's kind " + target.kind + " (" + target.api_version +
                             ") is not a resource of this cluster");
  }
  const std::string prefix =
      resource->group.empty() ? "/api/" + resource->version : "/apis/" + resource->apiVersion();
  const json answer = get(prefix + "/namespaces/" + text::percentEncode(namespace_name) + "/" +
                          resource->plural + "/" + text::percentEncode(target.name) + "/scale");
  TargetScale scale;
  const json spec = answer.value("spec", json::object());
  const json status = answer.value("status", json::object());
  scale.spec_replicas = spec.value("replicas", 0);
  scale.status_replicas = status.value("replicas", 0);
  scale.selector = jsonText(status, "selector");
  return scale;
}

std::vector<ClusterPod> DoctorCluster::pods(const std::string& namespace_name,
                                            const std::string& selector) {
  // One LIST of the namespace, filtered here with the server's selector parser.
  const promql::LabelSelector parsed = promql::parseLabelSelector(selector);
  const json list = get("/api/v1/namespaces/" + text::percentEncode(namespace_name) + "/pods");
  std::vector<ClusterPod> pods;
  for (const auto& item : list.value("items", json::array())) {
    const json metadata = item.value("metadata", json::object());
    ClusterPod pod;
    pod.meta.namespace_name = jsonText(metadata, "namespace");
    if (pod.meta.namespace_name.empty()) pod.meta.namespace_name = namespace_name;
    pod.meta.name = jsonText(metadata, "name");
    pod.meta.labels = labelsOf(metadata);
    pod.meta.creation_timestamp = jsonText(metadata, "creationTimestamp");
    pod.deleted =
        metadata.contains("deletionTimestamp") && !metadata["deletionTimestamp"].is_null();
    const json status = item.value("status", json::object());
    pod.phase = jsonText(status, "phase");
    pod.ready = podReady(status);
    pod.containers = podContainers(item.value("spec", json::object()));
    if (doctorSelectorMatches(parsed, pod.meta, namespace_name)) pods.push_back(std::move(pod));
  }
  std::sort(pods.begin(), pods.end(),
            [](const ClusterPod& a, const ClusterPod& b) { return a.meta.name < b.meta.name; });
  return pods;
}

std::optional<ApiServiceProblem> DoctorCluster::apiServiceProblem(const std::string& name) {
  json service;
  try {
    service = get("/apis/apiregistration.k8s.io/v1/apiservices/" + text::percentEncode(name));
  } catch (const kube::KubeError& e) {
    if (e.httpStatus() != 404) throw;
    return ApiServiceProblem{name, "not registered",
                             "apply the kit's APIService (deploy/base/apiservices.yaml, or the "
                             "Helm chart)"};
  }
  const json status = service.value("status", json::object());
  for (const auto& condition : status.value("conditions", json::array())) {
    if (jsonText(condition, "type") != "Available") continue;
    if (jsonText(condition, "status") == "True") return std::nullopt;
    const std::string message =
        jsonText(condition, "reason") + ": " + jsonText(condition, "message");
    return ApiServiceProblem{name, "not Available (" + message + ")", apiServiceFix(message)};
  }
  return ApiServiceProblem{name, "no Available condition yet",
                           "the aggregator has not checked it yet; look again in a few seconds"};
}

std::string DoctorCluster::apiServiceBackend(const std::string& name) {
  try {
    const json service =
        get("/apis/apiregistration.k8s.io/v1/apiservices/" + text::percentEncode(name));
    const json spec = service.value("spec", json::object());
    const json target = spec.is_object() ? spec.value("service", json()) : json();
    if (!target.is_object()) return "";
    return jsonText(target, "namespace") + "/" + jsonText(target, "name");
  } catch (const std::exception&) {
    return "";  // the caller says "another server" instead
  }
}

std::optional<std::string> DoctorCluster::hpaControllerDenied(
    const std::string& group, const std::string& resource, const std::string& subresource,
    const std::string& name, const std::string& namespace_name, const std::string& verb) {
  json attributes = {
      {"group", group}, {"resource", resource}, {"verb", verb}, {"namespace", namespace_name}};
  if (!subresource.empty()) attributes["subresource"] = subresource;
  if (!name.empty()) attributes["name"] = name;
  const json review = {
      {"apiVersion", "authorization.k8s.io/v1"},
      {"kind", "SubjectAccessReview"},
      {"spec",
       {{"user", kHpaControllerUser},
        {"groups",
         {"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}},
        {"resourceAttributes", attributes}}}};
  const json answer =
      api_->post("/apis/authorization.k8s.io/v1/subjectaccessreviews", review, kDoctorCallTimeout);
  const json status = answer.value("status", json::object());
  if (status.value("allowed", false)) return std::nullopt;
  const std::string reason = jsonText(status, "reason");
  return std::string(kHpaControllerUser) + " cannot " + verb + " resource \"" + resource +
         "\" in API group \"" + group + "\" in the namespace \"" + namespace_name + "\"" +
         (reason.empty() ? "" : " (" + reason + ")");
}

FixedPodLister::FixedPodLister(std::vector<kube::ObjectMeta> pods) : pods_(std::move(pods)) {}

std::vector<std::string> FixedPodLister::listNames(const kube::ResourceInfo& resource,
                                                   const std::string& namespace_name,
                                                   const promql::LabelSelector& selector) {
  std::vector<std::string> names;
  for (const auto& pod : listObjects(resource, namespace_name, selector)) names.push_back(pod.name);
  return names;
}

std::vector<kube::ObjectMeta> FixedPodLister::listObjects(const kube::ResourceInfo& resource,
                                                          const std::string& namespace_name,
                                                          const promql::LabelSelector& selector,
                                                          const std::string& /*field_selector*/) {
  std::vector<kube::ObjectMeta> found;
  if (resource.group.empty() && resource.plural == "pods") {
    for (const auto& pod : pods_) {
      if (doctorSelectorMatches(selector, pod, namespace_name)) found.push_back(pod);
    }
  }
  return found;
}

}  // namespace metrics_adapter::cli
