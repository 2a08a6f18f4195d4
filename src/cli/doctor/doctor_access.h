#pragma once

#include "cli/doctor/doctor_cluster.h"
#include "cli/doctor/doctor_diagnosis.h"
#include "metrics_adapter/hpa/hpa_object.h"

namespace metrics_adapter::cli {

// What stands between the HPA controller and the adapter, checked before any value matters.

// The APIServices `hpa`'s metrics go through that are not Available (or not registered), into
// diagnosis.apiservices; a check the doctor may not make is noted in diagnosis.scale_error.
void checkApiServices(const hpa::Hpa& hpa, DoctorCluster& cluster, HpaDiagnosis& diagnosis);

// The requests of diagnosis.metrics the HPA controller may not make (RBAC), into
// diagnosis.denied: authorization reads each as the server's own parser does (verb, group,
// resource, name, subresource, namespace).
void checkHpaControllerAccess(DoctorCluster& cluster, HpaDiagnosis& diagnosis);

}  // namespace metrics_adapter::cli
