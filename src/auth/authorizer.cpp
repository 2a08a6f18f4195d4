#include "metrics_adapter/auth/authorizer.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "auth/subject_access_review.h"
#include "auth/token_review.h"
#include "auth/ttl_cache.h"
#include "metrics_adapter/net/text.h"
#include "metrics_adapter/promql/label_matchers.h"

namespace metrics_adapter::auth {
namespace {

using AuthzOutcome = AuthorizationResult::Outcome;

constexpr std::string_view kPrivilegedGroup = "system:masters";
constexpr std::size_t kMaxErrorBytes = 512;

std::string_view withoutLeadingSlash(std::string_view path) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return path;
}

}  // namespace

// Upstream's path authorizer: entries and request paths are compared without their leading
// '/'; an entry ending in '*' is a prefix, and only resource-less (path) requests match. Outside
// the anonymous namespace because Authorizer::Impl holds one (g++ warns of that when the module
// is compiled as one batch, MA_UNITY_ALL).
class AlwaysAllowPaths {
 public:
  explicit AlwaysAllowPaths(const std::vector<std::string>& entries) {
    for (const std::string& entry : entries) {
      const std::string_view path = withoutLeadingSlash(entry);
      if (path.empty()) {
        exact_.emplace_back(path);
        continue;
      }
      if (path.substr(0, path.size() - 1).find('*') != std::string_view::npos) {
        throw std::invalid_argument(
            "--authorization-always-allow-paths: only a trailing * is "
            "allowed in \"" +
            entry + "\"");
      }
      if (path.back() == '*') {
        prefixes_.emplace_back(path.substr(0, path.size() - 1));
      } else {
        exact_.emplace_back(path);
      }
    }
  }

  bool allows(const server::RequestInfo& attributes) const {
    if (attributes.resource_request) return false;
    const std::string_view path = withoutLeadingSlash(attributes.path);
    return std::find(exact_.begin(), exact_.end(), path) != exact_.end() ||
           std::any_of(prefixes_.begin(), prefixes_.end(),
                       [&](const std::string& prefix) { return path.starts_with(prefix); });
  }

 private:
  std::vector<std::string> exact_;
  std::vector<std::string> prefixes_;
};

namespace {

// The review's spec with the groups sorted, serialised: equal keys ask the same question.
std::string cacheKey(const UserInfo& user, const server::RequestInfo& attributes) {
  UserInfo canonical = user;
  std::sort(canonical.groups.begin(), canonical.groups.end());
  // Hashed: the spec can carry up to the header limit of user extras, times every cache entry.
  return sha256(subjectAccessReview(canonical, attributes)["spec"].dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Go's encoding/json writes invalid UTF-8 as U+FFFD; nlohmann would throw on it instead.
nlohmann::json withValidUtf8(const nlohmann::json& body) {
  return nlohmann::json::parse(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

AuthorizationResult unavailable(std::string_view why) {
  return {AuthzOutcome::kUnavailable,
          "SubjectAccessReview failed: " + net::sanitizeLine(why, kMaxErrorBytes)};
}

}  // namespace

struct Authorizer::Impl {
  Impl(std::shared_ptr<kube::KubeApi> api_in, AuthorizerOptions options_in,
       std::function<std::chrono::steady_clock::time_point()> now)
      : api(std::move(api_in)),
        options(std::move(options_in)),
        always_allow(options.always_allow_paths),
        cache(options.cache_entries, std::move(now)) {}

  AuthorizationResult review(const UserInfo& user, const server::RequestInfo& attributes) {
    reviews.fetch_add(1, std::memory_order_relaxed);
    nlohmann::json answer;
    try {
      answer =
          api->post(kSubjectAccessReviewPath, withValidUtf8(subjectAccessReview(user, attributes)),
                    options.review_timeout);
    } catch (const std::exception& error) {
      return unavailable(error.what());
    }
    auto decision = reviewDecision(answer);
    if (!decision) return unavailable("the answer is not a SubjectAccessReview");
    return *decision;
  }

  const std::shared_ptr<kube::KubeApi> api;
  const AuthorizerOptions options;
  const AlwaysAllowPaths always_allow;
  TtlCache<std::string, AuthorizationResult> cache;
  std::atomic<std::size_t> reviews{0};
  std::atomic<std::size_t> cache_hits{0};
};

Authorizer::Authorizer(std::shared_ptr<kube::KubeApi> api, AuthorizerOptions options)
    : Authorizer(std::move(api), std::move(options), std::chrono::steady_clock::now) {}

Authorizer::Authorizer(std::shared_ptr<kube::KubeApi> api, AuthorizerOptions options,
                       std::function<std::chrono::steady_clock::time_point()> now)
    : impl_(std::make_unique<Impl>(std::move(api), std::move(options), std::move(now))) {}

Authorizer::~Authorizer() = default;

AuthorizationResult Authorizer::authorize(const UserInfo& user,
                                          const server::RequestInfo& attributes, Reviews reviews) {
  const bool privileged =
      std::find(user.groups.begin(), user.groups.end(), kPrivilegedGroup) != user.groups.end();
  if (privileged || impl_->always_allow.allows(attributes)) return {AuthzOutcome::kAllowed, ""};
  if (!impl_->api) return {AuthzOutcome::kDenied, ""};

  const std::string key = cacheKey(user, attributes);
  if (auto cached = impl_->cache.get(key)) {
    impl_->cache_hits.fetch_add(1, std::memory_order_relaxed);
    return *cached;
  }
  if (reviews == Reviews::kCachedOnly) return {AuthzOutcome::kNeedsReview, ""};
  AuthorizationResult result = impl_->review(user, attributes);
  if (result.outcome == AuthzOutcome::kAllowed) {
    impl_->cache.put(key, result, impl_->options.allowed_ttl);
  } else if (result.outcome == AuthzOutcome::kDenied) {
    impl_->cache.put(key, result, impl_->options.denied_ttl);
  }
  return result;
}

Authorizer::Stats Authorizer::stats() const {
  return {impl_->reviews.load(std::memory_order_relaxed),
          impl_->cache_hits.load(std::memory_order_relaxed)};
}

std::string forbiddenMessage(const UserInfo& user, const server::RequestInfo& attributes,
                             const std::string& reason) {
  using promql::quoteGoString;
  std::string message;
  if (!attributes.resource_request) {
    message = "forbidden: User " + quoteGoString(user.name) + " cannot " + attributes.verb +
              " path " + quoteGoString(attributes.path);
  } else {
    // apierrors.NewForbidden names the GroupResource (resource.group, or the bare resource in
    // the core group) and quotes the object name only when there is one.
    const std::string group_resource = attributes.api_group.empty()
                                           ? attributes.resource
                                           : attributes.resource + "." + attributes.api_group;
    if (group_resource.empty()) {
      message = "forbidden: ";
    } else if (attributes.name.empty()) {
      message = group_resource + " is forbidden: ";
    } else {
      message = group_resource + " " + quoteGoString(attributes.name) + " is forbidden: ";
    }
    std::string resource = attributes.resource;
    if (!attributes.subresource.empty()) resource += "/" + attributes.subresource;
    message += "User " + quoteGoString(user.name) + " cannot " + attributes.verb + " resource " +
               quoteGoString(resource) + " in API group " + quoteGoString(attributes.api_group);
    message += attributes.namespace_name.empty()
                   ? " at the cluster scope"
                   : " in the namespace " + quoteGoString(attributes.namespace_name);
  }
  if (!reason.empty()) message += ": " + reason;
  return message;
}

}  // namespace metrics_adapter::auth
