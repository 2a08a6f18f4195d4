#pragma once

#include <chrono>
#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/kube/rest_mapper.h"

namespace metrics_adapter::kube {

// The resources of one APIResourceList document (`/api/v1`, `/apis/<group>/<version>`).
// Subresources ("pods/status") are skipped; an empty singularName is derived from the kind,
// as client-go does.
std::vector<ResourceInfo> parseApiResourceList(const nlohmann::json& list, std::string_view group,
                                               std::string_view version);

// Reads the cluster's resources: /api/v1, then /apis and each group's preferred version, in
// the server's priority order (core first). Throws KubeError when /api/v1 or /apis fails; a
// group whose list fails is skipped (its resources stay unknown until the next refresh).
std::vector<ResourceInfo> discoverResources(KubeApi& api, std::chrono::milliseconds timeout);

}  // namespace metrics_adapter::kube
