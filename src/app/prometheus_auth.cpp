#include "app/prometheus_auth.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>

#include "metrics_adapter/net/bearer_token_file.h"
#include "metrics_adapter/net/tls_client.h"

namespace metrics_adapter::app {
namespace {

constexpr const char* kAuthConfigFlag = "--prometheus-auth-config";
constexpr const char* kInClusterFlag = "--prometheus-auth-incluster";

// Reads a token or password file once, as the client will, so that a mistake fails at startup
// with `setting` in the message.
void checkSecretFile(const std::string& path, const std::string& setting) {
  net::BearerTokenFile(path, std::chrono::milliseconds(0), setting);
}

// Loads the TLS inputs a flag brought the way the client will; errors name `setting`.
void checkTls(net::TlsClientSettings tls, const std::string& setting) {
  tls.ca.name = setting + ": the CA";
  tls.client_cert.name = setting + ": the client certificate";
  tls.client_key.name = setting + ": the client key";
  net::validateTlsSettings(tls);
}

// Whether the token flag replaces the bearer token or basic auth that `source` would bring.
bool tokenFlagWins(const prometheus::PrometheusClientOptions& options, const std::string& source) {
  if (options.token_file.empty()) return false;
  SPDLOG_INFO("{}: its credential is not used: --prometheus-token-file sets the bearer token",
              source);
  return true;
}

}  // namespace

void applyPrometheusAuthConfig(const std::string& kubeconfig_path,
                               prometheus::PrometheusClientOptions& options) {
  const std::string setting =
      std::string(kAuthConfigFlag) + " (kubeconfig " + kubeconfig_path + ")";
  kube::KubeClientOptions kubeconfig;
  try {
    kubeconfig = kube::loadKubeconfig(kubeconfig_path);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(kAuthConfigFlag) + ": " + e.what());
  }
  const auto fail = [&setting](const std::string& why) {
    throw std::invalid_argument(setting + ": " + why);
  };
  const bool has_cert = !kubeconfig.client_cert_file.empty() ||
                        !kubeconfig.client_cert_data.empty() ||
                        !kubeconfig.client_key_file.empty() || !kubeconfig.client_key_data.empty();
  if (has_cert && (!options.client_cert_file.empty() || !options.client_key_file.empty() ||
                   !options.client_cert_data.empty() || !options.client_key_data.empty())) {
    fail(
        "sets a client certificate and --prometheus-client-tls-cert-file/-key-file do too; use "
        "one of them");
  }
  const bool has_ca = !kubeconfig.ca_file.empty() || !kubeconfig.ca_data.empty();
  if (has_ca && (!options.ca_file.empty() || !options.ca_data.empty())) {
    fail("sets a CA and --prometheus-ca-file does too; use one of them");
  }
  if (has_ca && kubeconfig.insecure_skip_tls_verify) {
    fail("certificate-authority cannot be combined with insecure-skip-tls-verify");
  }
  const bool has_token = !kubeconfig.token.empty() || !kubeconfig.token_file.empty();
  const bool has_basic = !kubeconfig.username.empty() || !kubeconfig.password.empty();
  if (has_token && has_basic) fail("a user may set a token or username/password, not both");
  if (has_basic && (kubeconfig.username.empty() || kubeconfig.password.empty())) {
    fail("basic authentication needs both username and password");
  }
  checkTls({.ca = {kubeconfig.ca_file, kubeconfig.ca_data, ""},
            .client_cert = {kubeconfig.client_cert_file, kubeconfig.client_cert_data, ""},
            .client_key = {kubeconfig.client_key_file, kubeconfig.client_key_data, ""},
            .ca_replaces_system_roots = true},
           setting);

  if ((has_token || has_basic) && !tokenFlagWins(options, setting)) {
    // tokenFile wins over token, as in client-go: the file is what the issuer keeps fresh.
    if (!kubeconfig.token_file.empty()) {
      checkSecretFile(kubeconfig.token_file, setting + ": tokenFile");
      options.token_file = kubeconfig.token_file;
    } else {
      options.bearer_token = kubeconfig.token;
    }
    options.basic_auth_username = kubeconfig.username;
    options.basic_auth_password = kubeconfig.password;
  }
  if (has_ca) {
    options.ca_file = kubeconfig.ca_file;
    options.ca_data = kubeconfig.ca_data;
    options.ca_replaces_system_roots = true;
  }
  if (has_cert) {
    options.client_cert_file = kubeconfig.client_cert_file;
    options.client_cert_data = kubeconfig.client_cert_data;
    options.client_key_file = kubeconfig.client_key_file;
    options.client_key_data = kubeconfig.client_key_data;
  }
  if (kubeconfig.insecure_skip_tls_verify) options.insecure_skip_tls_verify = true;
}

void applyPrometheusInCluster(prometheus::PrometheusClientOptions& options,
                              const std::string& secrets_dir) {
  const std::string setting = kInClusterFlag;
  if (!tokenFlagWins(options, setting)) {
    options.token_file = secrets_dir + "/token";
    checkSecretFile(options.token_file, setting + ": the service-account token");
  }
  if (!options.ca_file.empty() || !options.ca_data.empty()) {
    throw std::invalid_argument(setting +
                                ": the service-account CA and --prometheus-ca-file "
                                "cannot be used together");
  }
  options.ca_file = secrets_dir + "/ca.crt";
  options.ca_replaces_system_roots = true;
  net::TlsClientSettings tls;
  tls.ca.file = options.ca_file;
  checkTls(tls, setting);
}

void applyPrometheusAuthFlags(const std::string& auth_config, bool in_cluster,
                              prometheus::PrometheusClientOptions& options) {
  if (auth_config.empty() && !in_cluster) return;
  if (!auth_config.empty() && in_cluster) {
    throw std::invalid_argument(std::string(kAuthConfigFlag) + " and " + kInClusterFlag +
                                " cannot be used together; choose one");
  }
  const char* flag = in_cluster ? kInClusterFlag : kAuthConfigFlag;
  if (!options.ca_file.empty()) {
    SPDLOG_WARN(
        "{} is ignored because --prometheus-ca-file is set (as in prometheus-adapter): "
        "Prometheus is reached with the CA file, the client certificate flags and "
        "--prometheus-token-file only",
        flag);
    return;
  }
  if (in_cluster) {
    applyPrometheusInCluster(options);
  } else {
    applyPrometheusAuthConfig(auth_config, options);
  }
}

}  // namespace metrics_adapter::app
