#pragma once

#include <memory>

#include "app/periodic_task.h"
#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/auth/auth_filter.h"

namespace metrics_adapter::app {

// The delegated-auth pieces and the refresh of the trust ConfigMap, kept alive together.
struct AuthStack {
  std::shared_ptr<auth::AuthFilter> filter;
  std::unique_ptr<PeriodicTask> config_refresh;  // re-reads the ConfigMap (CA rotation)
};

// Builds the stack from flags and, unless --authentication-skip-lookup, the
// kube-system/extension-apiserver-authentication ConfigMap (flags win over it). Throws
// std::invalid_argument for unreadable CA files.
AuthStack makeAuthStack(const AuthOptions& options,
                        const std::shared_ptr<kube::KubeApi>& authentication_api,
                        const std::shared_ptr<kube::KubeApi>& authorization_api);

}  // namespace metrics_adapter::app
