#pragma once

#include <optional>
#include <string>

#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::cli {

// The rules and the Prometheus URL a running adapter uses, read from its Deployment: the
// container's --config file through the ConfigMap volume mounted there, and --prometheus-url.
struct AdapterDeploymentConfig {
  std::string config_text;
  std::string source;  // "configmap custom-metrics/metrics-adapter-config, key config.yaml"
  std::optional<std::string> prometheus_url;  // the container's --prometheus-url
};

// Reads the Deployment `name` in `namespace_name` and the ConfigMap behind its --config file.
// Throws kube::KubeError for a failed GET and std::runtime_error naming what is missing (no
// container with --config, no volume mounted at that path, a volume that is no ConfigMap, a key
// the ConfigMap lacks).
AdapterDeploymentConfig readAdapterDeploymentConfig(kube::KubeApi& api,
                                                    const std::string& namespace_name,
                                                    const std::string& name);

}  // namespace metrics_adapter::cli
