#pragma once

#include <memory>

#include "metrics_adapter/api/router.h"
#include "metrics_adapter/discovery/registry.h"
#include "metrics_adapter/kube/rest_mapper.h"

namespace metrics_adapter::testing {

// A Router over an empty registry: discovery answers (rendered once, as in the adapter), metric
// routes 404.
inline std::shared_ptr<const api::Router> emptyRouter() {
  auto rule_set = std::make_shared<discovery::RuleSet>();
  rule_set->mapper = std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin());
  auto snapshot = std::make_shared<const discovery::RegistrySnapshot>(rule_set);
  return std::make_shared<const api::Router>(
      api::RouterParts{.snapshots = [snapshot] { return snapshot; }});
}

}  // namespace metrics_adapter::testing
