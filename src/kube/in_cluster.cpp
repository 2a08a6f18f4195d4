#include <cstdlib>
#include <string>

#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::kube {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

std::string serviceAccountDir() {
  const std::string overridden = environment("METRICS_ADAPTER_SERVICE_ACCOUNT_DIR");
  return overridden.empty() ? "/var/run/secrets/kubernetes.io/serviceaccount" : overridden;
}

std::optional<KubeClientOptions> inClusterOptions(const std::string& secrets_dir) {
  std::string host = environment("KUBERNETES_SERVICE_HOST");
  const std::string port = environment("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) return std::nullopt;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  KubeClientOptions options;
  options.server = "https://" + host + ":" + port;
  options.token_file = secrets_dir + "/token";
  options.ca_file = secrets_dir + "/ca.crt";
  options.source = "in-cluster";
  return options;
}

}  // namespace metrics_adapter::kube
