#pragma once

#include <string>

#include "unit/net/test_certificates.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::app::testing {

// Files the credential flags read: a kubeconfig with a token, and a service-account directory
// (METRICS_ADAPTER_SERVICE_ACCOUNT_DIR points there while a test needs it).
struct CredentialFiles {
  CredentialFiles() {
    kubeconfig = dir.write("kubeconfig",
                           "current-context: c\n"
                           "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                           "clusters: [{name: k, cluster: {server: 'https://ignored:6443'}}]\n"
                           "users: [{name: u, user: {token: kubeconfig-token}}]\n");
    dir.write("token", "service-account-token\n");
    dir.write("ca.crt", net::testing::makeTestPki().ca_cert);
  }
  net::testing::TempDir dir;
  std::string kubeconfig;
};

inline const CredentialFiles& credentialFiles() {
  static const CredentialFiles kFiles;
  return kFiles;
}

}  // namespace metrics_adapter::app::testing
