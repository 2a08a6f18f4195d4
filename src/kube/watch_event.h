#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::kube {

// One line of a watch stream: {"type": "ADDED", "object": {...}}. Private to kube (and its
// tests): the informer reads it, KubeClient and the fakes produce it.
struct WatchEvent {
  std::string type;       // ADDED, MODIFIED, DELETED, BOOKMARK or ERROR
  nlohmann::json object;  // the object; a Status for ERROR
};

}  // namespace metrics_adapter::kube
