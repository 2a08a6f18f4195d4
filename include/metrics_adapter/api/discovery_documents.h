#pragma once

#include <string>

#include "metrics_adapter/api/api_error.h"
#include "metrics_adapter/discovery/registry.h"

namespace metrics_adapter::api {

inline constexpr const char* kCustomMetricsGroup = "custom.metrics.k8s.io";

// APIGroupList for /apis (api.md §4.6, conformance C6).
Json apiGroupList();
// APIGroup for /apis/custom.metrics.k8s.io (C9): versions v1beta1 and v1beta2.
Json customMetricsGroup();
// APIResourceList for /apis/custom.metrics.k8s.io/<version>: one entry per served
// (resource, metric), "resources": [] when nothing is discovered yet (never 404).
Json customMetricsResourceList(const std::string& version,
                               const discovery::RegistrySnapshot& snapshot);

bool isCustomMetricsVersion(const std::string& version);

}  // namespace metrics_adapter::api
