#include "app/auth_setup.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::app {
namespace {

constexpr const char* kAuthConfigMap =
    "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";

std::string readPem(const std::string& path, const char* flag) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument(std::string("--") + flag + ": cannot read " + path);
  std::stringstream content;
  content << file.rdbuf();
  if (content.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    throw std::invalid_argument(std::string("--") + flag + ": " + path +
                                " holds no PEM certificate");
  }
  return content.str();
}

// The ConfigMap's trust, with every flag that was given taking precedence.
auth::AuthenticationConfig effectiveConfig(const AuthOptions& options,
                                           const auth::AuthenticationConfig& from_configmap,
                                           const std::string& client_ca_pem,
                                           const std::string& requestheader_ca_pem) {
  auth::AuthenticationConfig config = from_configmap;
  if (!client_ca_pem.empty()) config.client_ca_pem = client_ca_pem;
  if (!requestheader_ca_pem.empty()) config.requestheader_ca_pem = requestheader_ca_pem;
  if (options.requestheader_allowed_names) {
    config.allowed_names = *options.requestheader_allowed_names;
  }
  if (options.requestheader_username_headers) {
    config.username_headers = *options.requestheader_username_headers;
  }
  if (options.requestheader_group_headers) {
    config.group_headers = *options.requestheader_group_headers;
  }
  if (options.requestheader_extra_headers_prefix) {
    config.extra_header_prefixes = *options.requestheader_extra_headers_prefix;
  }
  return config;
}

void warnUnreadable(const std::exception& e) {
  SPDLOG_WARN(
      "cannot read kube-system/extension-apiserver-authentication ({}); front-proxy and client "
      "certificates are trusted only as the flags say. Grant the adapter the role "
      "extension-apiserver-authentication-reader in kube-system.",
      e.what());
}

std::optional<auth::AuthenticationConfig> readConfigMap(kube::KubeApi& api) {
  try {
    return auth::parseAuthenticationConfigMap(
        api.get(kAuthConfigMap, "application/json", std::chrono::seconds(5)));
  } catch (const std::exception& e) {
    warnUnreadable(e);
    return std::nullopt;
  }
}

// At start, as upstream: a ConfigMap that is not there means none (nothing to trust from it);
// one that cannot be read (forbidden, unreachable) stops the start unless
// --authentication-tolerate-lookup-failure, when it is a warning as at every later refresh.
std::optional<auth::AuthenticationConfig> readConfigMapAtStart(kube::KubeApi& api,
                                                               bool tolerate_failure) {
  try {
    return auth::parseAuthenticationConfigMap(
        api.get(kAuthConfigMap, "application/json", std::chrono::seconds(5)));
  } catch (const kube::KubeError& e) {
    if (e.httpStatus() != 404 && !tolerate_failure) {
      throw kube::KubeError(
          e.httpStatus(),
          std::string("cannot read kube-system/extension-apiserver-authentication: ") + e.what() +
              ". Grant the adapter the role extension-apiserver-authentication-reader in "
              "kube-system, or start anyway with --authentication-tolerate-lookup-failure (then "
              "only the CA flags given are trusted).");
    }
    warnUnreadable(e);
  } catch (const std::exception& e) {  // a malformed ConfigMap
    warnUnreadable(e);
  }
  return std::nullopt;
}

}  // namespace

AuthStack makeAuthStack(const AuthOptions& options,
                        const std::shared_ptr<kube::KubeApi>& authentication_api,
                        const std::shared_ptr<kube::KubeApi>& authorization_api) {
  const std::string client_ca =
      options.client_ca_file.empty() ? "" : readPem(options.client_ca_file, "client-ca-file");
  const std::string requestheader_ca =
      options.requestheader_client_ca_file.empty()
          ? ""
          : readPem(options.requestheader_client_ca_file, "requestheader-client-ca-file");

  auth::AuthenticationConfig from_configmap;
  if (!options.skip_lookup) {
    if (auto found = readConfigMapAtStart(*authentication_api, options.tolerate_lookup_failure)) {
      from_configmap = *found;
    }
  }
  auth::AuthenticatorOptions authenticator_options;
  authenticator_options.token_cache_ttl = options.token_cache_ttl;
  auto authenticator = std::make_shared<auth::Authenticator>(
      authentication_api, authenticator_options,
      effectiveConfig(options, from_configmap, client_ca, requestheader_ca));
  auth::AuthorizerOptions authorizer_options;
  authorizer_options.allowed_ttl = options.authorized_ttl;
  authorizer_options.denied_ttl = options.unauthorized_ttl;
  authorizer_options.always_allow_paths = options.always_allow_paths;
  auto authorizer = std::make_shared<auth::Authorizer>(authorization_api, authorizer_options);

  AuthStack stack;
  stack.filter = std::make_shared<auth::AuthFilter>(authenticator, authorizer);
  if (!options.skip_lookup) {
    stack.config_refresh = std::make_unique<PeriodicTask>(
        std::chrono::minutes(1),
        [options, authenticator, authentication_api, client_ca, requestheader_ca] {
          if (auto found = readConfigMap(*authentication_api)) {
            authenticator->setConfig(effectiveConfig(options, *found, client_ca, requestheader_ca));
          }
        });
    stack.config_refresh->start();
  }
  return stack;
}

}  // namespace metrics_adapter::app
