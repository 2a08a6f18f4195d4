#include "cli/doctor/doctor_access.h"

#include <exception>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::cli {

void checkApiServices(const hpa::Hpa& hpa, DoctorCluster& cluster, HpaDiagnosis& diagnosis) {
  std::set<std::string> groups;
  for (const auto& metric : hpa.metrics) {
    if (metric.type == "Pods" || metric.type == "Object") groups.insert("custom");
    if (metric.type == "External") groups.insert("external");
    if (metric.type == "Resource" || metric.type == "ContainerResource") groups.insert("resource");
  }
  try {
    if (groups.contains("custom")) {
      auto v1beta2 = cluster.apiServiceProblem("v1beta2.custom.metrics.k8s.io");
      auto v1beta1 = cluster.apiServiceProblem("v1beta1.custom.metrics.k8s.io");
      auto registered = [](const std::optional<ApiServiceProblem>& problem) {
        return !problem || problem->message != "not registered";
      };
      // Each registered version must be Available (the controller picks one by discovery);
      // one of them must be registered.
      for (const auto* problem : {&v1beta2, &v1beta1}) {
        if (*problem && registered(*problem)) diagnosis.apiservices.push_back(**problem);
      }
      if (!registered(v1beta2) && !registered(v1beta1)) diagnosis.apiservices.push_back(*v1beta1);
    }
    for (const auto& [group, name] : {std::pair{"external", "v1beta1.external.metrics.k8s.io"},
                                      std::pair{"resource", "v1beta1.metrics.k8s.io"}}) {
      if (!groups.contains(group)) continue;
      if (auto problem = cluster.apiServiceProblem(name)) diagnosis.apiservices.push_back(*problem);
    }
  } catch (const std::exception& e) {
    // Reading APIServices needs get on apiservices; without it the doctor goes on.
    diagnosis.scale_error += (diagnosis.scale_error.empty() ? "" : "; ") +
                             std::string("APIServices not checked: ") + e.what();
  }
}

void checkHpaControllerAccess(DoctorCluster& cluster, HpaDiagnosis& diagnosis) {
  for (const auto& metric : diagnosis.metrics) {
    if (metric.target.empty()) continue;
    try {
      const server::RequestInfo info = server::parseRequestInfo("GET", metric.target);
      if (auto denied = cluster.hpaControllerDenied(info.api_group, info.resource, info.subresource,
                                                    info.name, info.namespace_name, info.verb)) {
        diagnosis.denied.push_back(*denied);
      }
    } catch (const std::exception& e) {
      // The doctor's own user may lack create on subjectaccessreviews: say so, go on.
      diagnosis.scale_error += (diagnosis.scale_error.empty() ? "" : "; ") +
                               std::string("RBAC of the HPA controller not checked: ") + e.what();
      return;
    }
  }
}

}  // namespace metrics_adapter::cli
