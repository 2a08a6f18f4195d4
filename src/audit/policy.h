#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::audit {

// How much of a request an event records (audit.k8s.io Level), in increasing order.
enum class Level { kNone, kMetadata, kRequest, kRequestResponse };

// The stages of a request (audit.k8s.io Stage); a bit each in a StageSet.
enum class Stage : std::uint8_t {
  kRequestReceived = 1,
  kResponseStarted = 2,
  kResponseComplete = 4,
  kPanic = 8
};
using StageSet = std::uint8_t;

std::string_view levelName(Level level);
std::string_view stageName(Stage stage);

struct GroupResources {
  std::string group;  // "" is the core group
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
};

struct PolicyRule {
  Level level = Level::kNone;
  std::vector<std::string> users;
  std::vector<std::string> user_groups;
  std::vector<std::string> verbs;
  std::vector<GroupResources> resources;
  std::vector<std::string> namespaces;
  std::vector<std::string> non_resource_urls;
  StageSet omit_stages = 0;  // the rule's own and the policy's
};

// An audit.k8s.io/v1 (or v1beta1) Policy.
struct Policy {
  std::vector<PolicyRule> rules;
  StageSet omit_stages = 0;
};

// What the policy is asked about: a request's attributes as authorization sees them.
struct RequestAttributes {
  std::string_view user;  // "" when unknown: then no rule naming users or groups matches
  const std::vector<std::string>* groups = nullptr;
  std::string_view verb;
  bool resource_request = false;
  std::string_view api_group;
  std::string_view namespace_name;
  std::string_view resource;
  std::string_view subresource;
  std::string_view name;
  std::string_view path;  // the decoded path, for nonResourceURLs
};

// The level and omitted stages of the first rule that matches; kNone when none does.
struct PolicyDecision {
  Level level = Level::kNone;
  StageSet omit_stages = 0;
};

// Parses a Policy document. Throws std::invalid_argument naming `source` (the file), the rule
// index and the field: "policy.yaml: rules[2].level: unknown level \"Full\"".
Policy parsePolicy(std::string_view yaml, std::string_view source);
// Reads and parses the file; an unreadable file throws std::invalid_argument naming it.
Policy loadPolicy(const std::string& path);

// Upstream's policy checker: rules in order, first match wins.
PolicyDecision evaluatePolicy(const Policy& policy, const RequestAttributes& attributes);

}  // namespace metrics_adapter::audit
