#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "metrics_adapter/auth/authorizer.h"
#include "metrics_adapter/auth/user_info.h"
#include "metrics_adapter/server/request_info.h"

namespace metrics_adapter::auth {

inline constexpr const char* kSubjectAccessReviewPath =
    "/apis/authorization.k8s.io/v1/subjectaccessreviews";

// The authorization.k8s.io/v1 SubjectAccessReview that client-go's webhook authorizer sends for
// `user` doing `attributes` (docs/api-contract.md "Authorization (delegated)"): empty fields
// omitted, resourceAttributes for resource requests, nonResourceAttributes {path, verb} otherwise.
// Strings are passed through as they are; invalid UTF-8 must be dealt with when the body is
// serialised.
nlohmann::json subjectAccessReview(const UserInfo& user, const server::RequestInfo& attributes);

// The decision in a SubjectAccessReview answer: status.allowed -> kAllowed; otherwise kDenied
// (status.denied, or no opinion, which upstream also answers with 403), with status.reason
// as one printable line of bounded length. nullopt when the answer is not a SubjectAccessReview
// shape (fields of the wrong JSON type), which upstream treats as a failed review.
std::optional<AuthorizationResult> reviewDecision(const nlohmann::json& answer);

}  // namespace metrics_adapter::auth
