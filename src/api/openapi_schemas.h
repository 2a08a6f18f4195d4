#pragma once

#include <nlohmann/json.hpp>

#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api::openapi {

// The Swagger 2.0 definitions of every kind we return and what they refer to, keyed by the
// model names upstream publishes (e.g. io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.
// MetricValueList), with `$ref`s to "#/definitions/<name>". The top-level kinds carry
// x-kubernetes-group-version-kind, which `kubectl explain` and the aggregator's merger read.
const Json& definitions();

}  // namespace metrics_adapter::api::openapi
