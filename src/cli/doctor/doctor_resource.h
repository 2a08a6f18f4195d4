#pragma once

#include <vector>

#include "cli/doctor/doctor_cluster.h"
#include "cli/doctor/doctor_diagnosis.h"
#include "metrics_adapter/hpa/hpa_object.h"

namespace metrics_adapter::cli {

// Follows a Resource or ContainerResource metric as the HPA controller reads it: the
// metrics.k8s.io PodMetrics list of the scale target's selector, answered by the server's
// ResourceMetricsHandler when the config has resourceRules (else the metric is left unchecked:
// another APIService, metrics-server as a rule, serves the group), then the pods' usage against
// their requests. `pods` are the selector's pods as the cluster lists them.
void diagnoseResource(const hpa::Hpa& hpa, const HpaDiagnosis& hpa_diagnosis,
                      const std::vector<ClusterPod>& pods, const DoctorContext& context,
                      MetricDiagnosis& diagnosis);

}  // namespace metrics_adapter::cli
