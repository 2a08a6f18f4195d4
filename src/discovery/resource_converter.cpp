#include "metrics_adapter/discovery/resource_converter.h"

#include <re2/re2.h>

#include <utility>

namespace metrics_adapter::discovery {
namespace {

const std::set<std::string> kTemplateFields = {"Group", "Resource"};

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string describeRef(const config::GroupResourceRef& ref) {
  return ref.group.empty() ? ref.resource : ref.resource + "." + ref.group;
}

// .Group as it appears in label names: '.' and '-' are not allowed there.
std::string labelSafeGroup(std::string group) {
  for (char& c : group) {
    if (c == '.' || c == '-') c = '_';
  }
  return group;
}

}  // namespace

ResourceConverter::ResourceConverter(const config::ResourceMapping& mapping,
                                     const kube::RestMapper& mapper, const std::string& path,
                                     std::vector<std::string>* warnings)
    : mapper_(&mapper), namespaced_(mapping.namespaced) {
  const auto warn = [warnings](std::string message) {
    if (warnings != nullptr) warnings->push_back(std::move(message));
  };

  if (!mapping.template_text.empty()) {
    const std::string field = path + ".resources.template";
    // docs/api-contract.md "prometheus-adapter: resource template": the template rendered with
    // capture groups in place of .Group and .Resource, its literal parts not escaped, anchored,
    // is the regex that recognises resource labels.
    std::string rendered;
    try {
      template_ = promql::Template::parse(mapping.template_text, kTemplateFields);
      rendered = template_->render({{"Group", std::string("(?P<group>.+?)")},
                                    {"Resource", std::string("(?P<resource>.+?)")}});
    } catch (const promql::TemplateError& e) {
      throw config::ConfigError(field + ": " + e.what());
    }
    if (rendered.empty()) throw config::ConfigError(field + ": renders to an empty label name");
    template_regex_ = "^" + rendered + "$";
    re2::RE2::Options options;
    options.set_log_errors(false);
    auto regex = std::make_shared<const re2::RE2>(template_regex_, options);
    if (!regex->ok()) {
      throw config::ConfigError(field + ": gives an invalid label regex " +
                                quoted(template_regex_) + ": " + regex->error());
    }
    if (regex->NamedCapturingGroups().count("resource") == 0) {
      throw config::ConfigError(field + ": must reference .Resource");
    }
    label_regex_ = std::move(regex);
  }

  // std::map iterates labels alphabetically, so the first label seen for a resource is the
  // alphabetically first one: that is the one queries use (upstream picks one at random).
  std::map<std::string, std::string> label_of_resource;
  for (const auto& [label, ref] : mapping.overrides) {
    std::string field = path;
    field.append(".resources.overrides.").append(label);
    std::optional<kube::ResourceInfo> resource = mapper.resourceFor(ref.group, ref.resource);
    if (!resource) {
      warn(field + ": unknown resource " + quoted(describeRef(ref)) +
           "; the rule is disabled until it exists");
      has_unknown_overrides_ = true;
      continue;
    }
    const auto [first, inserted] = label_of_resource.emplace(resource->groupResource(), label);
    if (!inserted) {
      warn(field + ": resource " + quoted(resource->groupResource()) +
           " is also mapped from label " + quoted(first->second) + "; queries use label " +
           quoted(first->second));
    }
    overrides_.emplace(label, std::move(*resource));
  }
}

std::optional<kube::ResourceInfo> ResourceConverter::resourceForLabel(
    std::string_view label) const {
  if (label == "__name__") return std::nullopt;
  if (const auto it = overrides_.find(std::string(label)); it != overrides_.end()) {
    return it->second;
  }
  if (!label_regex_) return std::nullopt;
  const re2::RE2& regex = *label_regex_;
  std::vector<re2::StringPiece> groups(static_cast<std::size_t>(regex.NumberOfCapturingGroups()) +
                                       1);
  if (!regex.Match(re2::StringPiece(label.data(), label.size()), 0, label.size(),
                   re2::RE2::ANCHOR_BOTH, groups.data(), static_cast<int>(groups.size()))) {
    return std::nullopt;
  }
  const auto& names = regex.NamedCapturingGroups();
  const auto text = [&](const char* name) -> std::string_view {
    const auto it = names.find(name);
    if (it == names.end() || groups[it->second].data() == nullptr) return {};
    return {groups[it->second].data(), groups[it->second].size()};
  };
  return mapper_->resourceFor(text("group"), text("resource"));
}

std::optional<std::string> ResourceConverter::labelForResource(
    const kube::ResourceInfo& resource) const {
  for (const auto& [label, target] : overrides_) {
    if (target.group == resource.group && target.plural == resource.plural) return label;
  }
  if (!template_) return std::nullopt;
  std::string label;
  try {
    label = template_->render(
        {{"Group", labelSafeGroup(resource.group)}, {"Resource", resource.singular}});
  } catch (const promql::TemplateError&) {
    return std::nullopt;
  }
  if (label.empty()) return std::nullopt;
  return label;
}

}  // namespace metrics_adapter::discovery
