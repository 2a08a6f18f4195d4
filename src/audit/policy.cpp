#include "audit/policy.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace metrics_adapter::audit {
namespace {

struct Context {
  std::string_view source;

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw std::invalid_argument(std::string(source) + ": " + field + ": " + message);
  }
};

std::string child(const std::string& field, const std::string& key) {
  std::string path = field;
  path += '.';
  path += key;
  return path;
}

std::string inQuotes(const std::string& text) { return "\"" + text + "\""; }

std::string scalar(const Context& context, const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar()) context.fail(field, "must be a string");
  return node.Scalar();
}

std::vector<std::string> strings(const Context& context, const YAML::Node& node,
                                 const std::string& field) {
  std::vector<std::string> values;
  if (node.IsNull()) return values;
  if (!node.IsSequence()) context.fail(field, "must be a list of strings");
  for (std::size_t i = 0; i < node.size(); ++i) {
    values.push_back(scalar(context, node[i], field + "[" + std::to_string(i) + "]"));
  }
  return values;
}

Level parseLevel(const Context& context, const YAML::Node& node, const std::string& field) {
  const std::string text = scalar(context, node, field);
  for (const Level level :
       {Level::kNone, Level::kMetadata, Level::kRequest, Level::kRequestResponse}) {
    if (text == levelName(level)) return level;
  }
  context.fail(field, "unknown level " + inQuotes(text) +
                          " (one of None, Metadata, Request, RequestResponse)");
}

StageSet parseStages(const Context& context, const YAML::Node& node, const std::string& field) {
  StageSet stages = 0;
  const std::vector<std::string> names = strings(context, node, field);
  for (std::size_t i = 0; i < names.size(); ++i) {
    bool known = false;
    for (const Stage stage : {Stage::kRequestReceived, Stage::kResponseStarted,
                              Stage::kResponseComplete, Stage::kPanic}) {
      if (names[i] == stageName(stage)) {
        stages |= static_cast<StageSet>(stage);
        known = true;
      }
    }
    if (!known) {
      context.fail(field + "[" + std::to_string(i) + "]",
                   "unknown stage " + inQuotes(names[i]) +
                       " (one of RequestReceived, ResponseStarted, ResponseComplete, Panic)");
    }
  }
  return stages;
}

bool parseBool(const Context& context, const YAML::Node& node, const std::string& field) {
  const std::string text = scalar(context, node, field);
  if (text == "true") return true;
  if (text == "false") return false;
  context.fail(field, "must be true or false");
}

GroupResources parseGroupResources(const Context& context, const YAML::Node& node,
                                   const std::string& field) {
  if (!node.IsMap()) context.fail(field, "must be a mapping");
  GroupResources result;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = child(field, key);
    if (key == "group") {
      result.group = entry.second.IsNull() ? "" : scalar(context, entry.second, path);
    } else if (key == "resources") {
      result.resources = strings(context, entry.second, path);
    } else if (key == "resourceNames") {
      result.resource_names = strings(context, entry.second, path);
    } else {
      context.fail(path, "unknown field");
    }
  }
  if (!result.resource_names.empty() && result.resources.empty()) {
    context.fail(field + ".resourceNames", "using resourceNames requires at least one resource");
  }
  return result;
}

PolicyRule parseRule(const Context& context, const YAML::Node& node, const std::string& field) {
  if (!node.IsMap()) context.fail(field, "must be a mapping");
  PolicyRule rule;
  bool has_level = false;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = child(field, key);
    if (key == "level") {
      rule.level = parseLevel(context, entry.second, path);
      has_level = true;
    } else if (key == "users") {
      rule.users = strings(context, entry.second, path);
    } else if (key == "userGroups") {
      rule.user_groups = strings(context, entry.second, path);
    } else if (key == "verbs") {
      rule.verbs = strings(context, entry.second, path);
    } else if (key == "resources") {
      if (!entry.second.IsNull() && !entry.second.IsSequence())
        context.fail(path, "must be a list");
      for (std::size_t i = 0; i < entry.second.size(); ++i) {
        rule.resources.push_back(
            parseGroupResources(context, entry.second[i], path + "[" + std::to_string(i) + "]"));
      }
    } else if (key == "namespaces") {
      rule.namespaces = strings(context, entry.second, path);
    } else if (key == "nonResourceURLs") {
      rule.non_resource_urls = strings(context, entry.second, path);
      for (std::size_t i = 0; i < rule.non_resource_urls.size(); ++i) {
        const std::string& url = rule.non_resource_urls[i];
        const std::size_t star = url.find('*');
        if (url != "*" && (url.empty() || url.front() != '/')) {
          context.fail(path + "[" + std::to_string(i) + "]", "must start with \"/\"");
        }
        if (star != std::string::npos && star != url.size() - 1) {
          context.fail(path + "[" + std::to_string(i) + "]", "\"*\" is allowed only at the end");
        }
      }
    } else if (key == "omitStages") {
      rule.omit_stages = parseStages(context, entry.second, path);
    } else if (key == "omitManagedFields") {
      parseBool(context, entry.second, path);  // our answers carry no managedFields
    } else {
      context.fail(path, "unknown field");
    }
  }
  if (!has_level) context.fail(field + ".level", "is required");
  if (!rule.non_resource_urls.empty() && (!rule.resources.empty() || !rule.namespaces.empty())) {
    context.fail(field + ".nonResourceURLs",
                 "rules cannot apply to both regular resources and non-resource URLs");
  }
  return rule;
}

bool contains(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool pathMatches(std::string_view path, std::string_view spec) {
  if (spec == "*" || spec == path) return true;
  if (!spec.empty() && spec.back() == '*') {
    while (!spec.empty() && spec.back() == '*') spec.remove_suffix(1);
    return path.substr(0, spec.size()) == spec;
  }
  return false;
}

bool matchesResource(const PolicyRule& rule, const RequestAttributes& a) {
  if (!a.resource_request) return false;
  if (!rule.namespaces.empty() && !contains(rule.namespaces, a.namespace_name)) return false;
  if (rule.resources.empty()) return true;
  std::string combined(a.resource);
  if (!a.subresource.empty()) combined.append("/").append(a.subresource);
  for (const GroupResources& group : rule.resources) {
    if (group.group != a.api_group) continue;
    if (group.resources.empty()) return true;
    if (!group.resource_names.empty() && !contains(group.resource_names, a.name)) continue;
    for (const std::string_view resource : group.resources) {
      if (resource == combined || resource == "*") return true;
      if (!a.subresource.empty() && resource.substr(0, 2) == "*/" &&
          resource.substr(2) == a.subresource) {
        return true;
      }
      if (resource.size() >= 2 && resource.substr(resource.size() - 2) == "/*" &&
          resource.substr(0, resource.size() - 2) == a.resource) {
        return true;
      }
    }
  }
  return false;
}

bool matches(const PolicyRule& rule, const RequestAttributes& a) {
  if (!rule.users.empty() && (a.user.empty() || !contains(rule.users, a.user))) return false;
  if (!rule.user_groups.empty()) {
    if (a.user.empty() || a.groups == nullptr) return false;
    const bool any = std::any_of(a.groups->begin(), a.groups->end(), [&](const std::string& g) {
      return contains(rule.user_groups, g);
    });
    if (!any) return false;
  }
  if (!rule.verbs.empty() && !contains(rule.verbs, a.verb)) return false;
  if (!rule.namespaces.empty() || !rule.resources.empty()) return matchesResource(rule, a);
  if (!rule.non_resource_urls.empty()) {
    if (a.resource_request) return false;
    return std::any_of(rule.non_resource_urls.begin(), rule.non_resource_urls.end(),
                       [&](const std::string& spec) { return pathMatches(a.path, spec); });
  }
  return true;
}

}  // namespace

std::string_view levelName(Level level) {
  switch (level) {
    case Level::kNone:
      return "None";
    case Level::kMetadata:
      return "Metadata";
    case Level::kRequest:
      return "Request";
    case Level::kRequestResponse:
      return "RequestResponse";
  }
  return "None";
}

std::string_view stageName(Stage stage) {
  switch (stage) {
    case Stage::kRequestReceived:
      return "RequestReceived";
    case Stage::kResponseStarted:
      return "ResponseStarted";
    case Stage::kResponseComplete:
      return "ResponseComplete";
    case Stage::kPanic:
      return "Panic";
  }
  return "Panic";
}

Policy parsePolicy(std::string_view yaml, std::string_view source) {
  const Context context{source};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    context.fail("line " + std::to_string(e.mark.line + 1), e.msg);
  }
  if (!root.IsMap()) context.fail("(document)", "must be a Policy mapping");
  Policy policy;
  bool has_kind = false;
  bool has_version = false;
  YAML::Node rules;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key == "apiVersion") {
      const std::string version = scalar(context, entry.second, key);
      if (version != "audit.k8s.io/v1" && version != "audit.k8s.io/v1beta1") {
        context.fail(
            key, "unsupported " + inQuotes(version) + " (audit.k8s.io/v1 or audit.k8s.io/v1beta1)");
      }
      has_version = true;
    } else if (key == "kind") {
      if (scalar(context, entry.second, key) != "Policy") context.fail(key, "must be Policy");
      has_kind = true;
    } else if (key == "metadata") {
      if (!entry.second.IsMap() && !entry.second.IsNull()) context.fail(key, "must be a mapping");
    } else if (key == "rules") {
      rules = entry.second;
    } else if (key == "omitStages") {
      policy.omit_stages = parseStages(context, entry.second, key);
    } else if (key == "omitManagedFields") {
      parseBool(context, entry.second, key);
    } else {
      context.fail(key, "unknown field");
    }
  }
  if (!has_version) context.fail("apiVersion", "is required");
  if (!has_kind) context.fail("kind", "is required");
  if (rules && !rules.IsNull()) {
    if (!rules.IsSequence()) context.fail("rules", "must be a list");
    for (std::size_t i = 0; i < rules.size(); ++i) {
      policy.rules.push_back(parseRule(context, rules[i], "rules[" + std::to_string(i) + "]"));
    }
  }
  for (PolicyRule& rule : policy.rules) rule.omit_stages |= policy.omit_stages;
  return policy;
}

Policy loadPolicy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read the audit policy file");
  std::ostringstream text;
  text << in.rdbuf();
  return parsePolicy(text.str(), path);
}

PolicyDecision evaluatePolicy(const Policy& policy, const RequestAttributes& attributes) {
  for (const PolicyRule& rule : policy.rules) {
    if (matches(rule, attributes)) return PolicyDecision{rule.level, rule.omit_stages};
  }
  return PolicyDecision{Level::kNone, policy.omit_stages};
}

}  // namespace metrics_adapter::audit
