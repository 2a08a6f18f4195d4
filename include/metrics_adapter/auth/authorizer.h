#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "metrics_adapter/auth/reviews.h"
#include "metrics_adapter/auth/user_info.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::auth {

struct AuthorizerOptions {
  std::chrono::milliseconds allowed_ttl{std::chrono::seconds(10)};
  std::chrono::milliseconds denied_ttl{std::chrono::seconds(10)};
  std::size_t cache_entries = 8192;
  std::chrono::milliseconds review_timeout{std::chrono::seconds(5)};
  // --authorization-always-allow-paths: exact paths, or prefixes ending in '*'. As upstream, they
  // match only non-resource requests (never /apis/<group>/<version>/<resource>...).
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
};

struct AuthorizationResult {
  // kNeedsReview: only with Reviews::kCachedOnly, when the decision is not cached.
  enum class Outcome { kAllowed, kDenied, kUnavailable, kNeedsReview };
  Outcome outcome = Outcome::kDenied;
  // kDenied: the SubjectAccessReview's reason (shown in 403 messages, as upstream), one printable
  // line of at most ~1 KiB. kUnavailable: why the review failed, for logs (no credentials).
  std::string reason;
};

// Delegated authorization (docs/api-contract.md "Authorization (delegated)"): always-allow paths
// and the system:masters group are allowed without asking; everything else is a
// SubjectAccessReview, cached by (user, attributes) for allowed_ttl / denied_ttl (a failed review,
// kUnavailable, is never cached). Thread-safe; no lock is held during a review, so concurrent
// identical requests may each ask.
class Authorizer {
 public:
  // `api` may be null: what the rules above do not allow is then denied without a reason
  // (upstream without an authorization kubeconfig). Throws std::invalid_argument for an
  // always-allow path with a '*' anywhere but at its end (upstream refuses those too).
  Authorizer(std::shared_ptr<kube::KubeApi> api, AuthorizerOptions options);
  // As above, with the clock the cache ages entries by (tests).
  Authorizer(std::shared_ptr<kube::KubeApi> api, AuthorizerOptions options,
             std::function<std::chrono::steady_clock::time_point()> now);
  ~Authorizer();

  AuthorizationResult authorize(const UserInfo& user, const server::RequestInfo& attributes,
                                Reviews reviews = Reviews::kMayAsk);

  struct Stats {
    std::size_t reviews = 0;
    std::size_t cache_hits = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The 403 message upstream writes (docs/api-contract.md "Status responses"), e.g.
// `pods.custom.metrics.k8s.io "*" is forbidden: User "alice" cannot get resource
// "pods/http_requests" in API group "custom.metrics.k8s.io" in the namespace "default"`,
// with ": <reason>" appended when the review gave one.
std::string forbiddenMessage(const UserInfo& user, const server::RequestInfo& attributes,
                             const std::string& reason);

}  // namespace metrics_adapter::auth
