#include "auth/subject_access_review.h"

#include <nlohmann/json.hpp>
#include <string>

#include "metrics_adapter/net/text.h"

namespace metrics_adapter::auth {
namespace {

// Keeps the cached decisions small whatever the API server writes into `reason`.
constexpr std::size_t kMaxReasonBytes = 1024;

void setIfNotEmpty(nlohmann::json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

}  // namespace

nlohmann::json subjectAccessReview(const UserInfo& user, const server::RequestInfo& attributes) {
  nlohmann::json spec = nlohmann::json::object();
  setIfNotEmpty(spec, "user", user.name);
  setIfNotEmpty(spec, "uid", user.uid);
  if (!user.groups.empty()) spec["groups"] = user.groups;
  if (!user.extra.empty()) {
    nlohmann::json extra = nlohmann::json::object();
    for (const auto& [key, values] : user.extra) extra[key] = values;
    spec["extra"] = std::move(extra);
  }
  if (attributes.resource_request) {
    nlohmann::json resource = nlohmann::json::object();
    setIfNotEmpty(resource, "namespace", attributes.namespace_name);
    setIfNotEmpty(resource, "verb", attributes.verb);
    setIfNotEmpty(resource, "group", attributes.api_group);
    setIfNotEmpty(resource, "version", attributes.api_version);
    setIfNotEmpty(resource, "resource", attributes.resource);
    setIfNotEmpty(resource, "subresource", attributes.subresource);
    setIfNotEmpty(resource, "name", attributes.name);
    spec["resourceAttributes"] = std::move(resource);
  } else {
    nlohmann::json non_resource = nlohmann::json::object();
    setIfNotEmpty(non_resource, "path", attributes.path);
    setIfNotEmpty(non_resource, "verb", attributes.verb);
    spec["nonResourceAttributes"] = std::move(non_resource);
  }
  return {{"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SubjectAccessReview"},
          {"spec", std::move(spec)}};
}

std::optional<AuthorizationResult> reviewDecision(const nlohmann::json& answer) {
  if (!answer.is_object()) return std::nullopt;
  const auto status = answer.find("status");
  if (status == answer.end() || status->is_null()) return AuthorizationResult{};
  if (!status->is_object()) return std::nullopt;

  // Go decodes absent or null fields as their zero values and rejects other types.
  bool allowed = false;
  std::string reason;
  if (const auto field = status->find("allowed"); field != status->end() && !field->is_null()) {
    if (!field->is_boolean()) return std::nullopt;
    allowed = field->get<bool>();
  }
  if (const auto field = status->find("denied"); field != status->end() && !field->is_null()) {
    if (!field->is_boolean()) return std::nullopt;
  }
  if (const auto field = status->find("reason"); field != status->end() && !field->is_null()) {
    if (!field->is_string()) return std::nullopt;
    reason = net::sanitizeLine(field->get_ref<const std::string&>(), kMaxReasonBytes);
  }
  AuthorizationResult result;
  result.outcome =
      allowed ? AuthorizationResult::Outcome::kAllowed : AuthorizationResult::Outcome::kDenied;
  result.reason = std::move(reason);
  return result;
}

}  // namespace metrics_adapter::auth
