#pragma once

#include <string>

#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/prometheus/prometheus_client.h"

namespace metrics_adapter::app {

// --prometheus-auth-config: puts the credentials and TLS settings of the kubeconfig's current
// context onto `options`: a bearer token or tokenFile, username/password (basic auth), a client
// certificate and key, a CA (each as a file or inline data) and insecure-skip-tls-verify. The
// server URL is ignored (Prometheus is --prometheus-url). The CA replaces the system roots, as
// client-go trusts it. A token or basic auth is left out, with a log line, when
// options.token_file (--prometheus-token-file) is set: that token wins, as upstream.
// Every file is read once here so that mistakes surface at startup. Throws
// std::invalid_argument starting with "--prometheus-auth-config" and naming the kubeconfig for
// an unreadable or unsupported kubeconfig, an unusable file it names, or a client certificate
// `options` already has from its own flags.
void applyPrometheusAuthConfig(const std::string& kubeconfig_path,
                               prometheus::PrometheusClientOptions& options);

// --prometheus-auth-incluster: the pod's service-account token (`secrets_dir`/token, re-read as
// the kubelet rotates it; left out like a kubeconfig's token when options.token_file is set) and
// CA (`secrets_dir`/ca.crt, replacing the system roots). Needs no KUBERNETES_SERVICE_HOST:
// Prometheus is --prometheus-url. Throws std::invalid_argument starting with
// "--prometheus-auth-incluster" when the token or the CA cannot be read.
void applyPrometheusInCluster(prometheus::PrometheusClientOptions& options,
                              const std::string& secrets_dir = kube::serviceAccountDir());

// Both flags as prometheus-adapter reads them: `auth_config` ("" for none) and `in_cluster` are
// exclusive (std::invalid_argument naming both), and with --prometheus-ca-file set both are
// ignored with a warning, the CA file's client being all upstream then uses.
void applyPrometheusAuthFlags(const std::string& auth_config, bool in_cluster,
                              prometheus::PrometheusClientOptions& options);

}  // namespace metrics_adapter::app
