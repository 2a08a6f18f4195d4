#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/config/config.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/promql/template.h"

namespace re2 {
class RE2;
}

namespace metrics_adapter::discovery {

// Maps Prometheus label names to Kubernetes resources and back for one rule
// (resources.overrides first, then resources.template), as prometheus-adapter does.
// Immutable after construction; thread-safe. `mapper` must outlive the converter.
class ResourceConverter {
 public:
  // `path` is the error prefix ("config.yaml: rules[0]"). Template errors throw ConfigError
  // naming "...resources.template". Overrides naming a resource the mapper does not know are
  // not fatal: they are described in `warnings` and hasUnknownOverrides() is true, so the
  // rule can be disabled until the resource exists (a CRD installed later).
  ResourceConverter(const config::ResourceMapping& mapping, const kube::RestMapper& mapper,
                    const std::string& path, std::vector<std::string>* warnings);

  // The resource a label stands for, or nullopt. "__name__" never maps.
  std::optional<kube::ResourceInfo> resourceForLabel(std::string_view label) const;

  // The label that carries `resource` (override first, else the rendered template with
  // .Group = group with '.' and '-' replaced by '_', .Resource = singular), or nullopt.
  std::optional<std::string> labelForResource(const kube::ResourceInfo& resource) const;

  bool namespaced() const { return namespaced_; }
  bool hasUnknownOverrides() const { return has_unknown_overrides_; }

 private:
  const kube::RestMapper* mapper_;
  std::map<std::string, kube::ResourceInfo> overrides_;  // label -> resource
  std::optional<promql::Template> template_;
  std::string template_regex_;  // "^...(?P<group>.+?)...(?P<resource>.+?)...$" or ""
  std::shared_ptr<const re2::RE2> label_regex_;  // template_regex_ compiled, or null
  bool namespaced_ = true;
  bool has_unknown_overrides_ = false;
};

}  // namespace metrics_adapter::discovery
