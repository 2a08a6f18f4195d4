#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "auth/ttl_cache.h"
#include "metrics_adapter/auth/reviews.h"
#include "metrics_adapter/auth/user_info.h"
#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::auth {

inline constexpr std::string_view kTokenReviewPath = "/apis/authentication.k8s.io/v1/tokenreviews";

// Longer bearer tokens are refused without a review (service-account and OIDC tokens are a few
// KiB at most).
inline constexpr std::size_t kMaxTokenBytes = std::size_t{16} * 1024;

// The token of an `Authorization: Bearer <token>` value, as upstream reads it: surrounding
// blanks trimmed, the scheme case-insensitive, the token ending at the next space. Empty when
// the value carries no bearer token.
std::string_view bearerToken(std::string_view authorization);

struct TokenReviewOutcome {
  // kNotCached: only from review(token, Reviews::kCachedOnly), when a review would be needed.
  enum class Kind { kAuthenticated, kRejected, kUnavailable, kNotCached };
  Kind kind = Kind::kRejected;
  UserInfo user;       // set when authenticated
  std::string reason;  // for logs; never contains the token
};

// The TokenReview to POST; spec.audiences only when `audiences` is not empty.
nlohmann::json tokenReviewRequest(const std::string& token,
                                  const std::vector<std::string>& audiences);

// Reads a TokenReview answer: authenticated with a username -> kAuthenticated with the user as
// given (uid, groups, extra; values of the wrong type are skipped); anything else -> kRejected.
// When `audiences` is not empty the answer's status.audiences must share one of them, as
// upstream's webhook authenticator requires.
TokenReviewOutcome readTokenReview(const nlohmann::json& answer,
                                   const std::vector<std::string>& audiences);

// SHA-256 of `text`, as 32 raw bytes: the cache key, so tokens are never kept.
std::string sha256(std::string_view text);

struct TokenReviewerOptions {
  std::chrono::milliseconds ttl{std::chrono::seconds(10)};  // authenticated and rejected alike
  std::size_t max_entries = 4096;
  std::chrono::milliseconds timeout{std::chrono::seconds(5)};
  std::vector<std::string> audiences;
  TtlCache<std::string, TokenReviewOutcome>::Now now = std::chrono::steady_clock::now;
};

// Reviews bearer tokens with the Kubernetes API and caches the answers (not the failures to
// get one) by the token's SHA-256. A null `api` rejects every token. Thread-safe; concurrent
// misses for one token may each make a review.
class TokenReviewer {
 public:
  TokenReviewer(std::shared_ptr<kube::KubeApi> api, TokenReviewerOptions options);

  TokenReviewOutcome review(const std::string& token, Reviews reviews = Reviews::kMayAsk);

  std::size_t reviews() const { return reviews_.load(); }
  std::size_t cacheHits() const { return cache_hits_.load(); }

 private:
  TokenReviewOutcome ask(const std::string& token);

  const std::shared_ptr<kube::KubeApi> api_;
  const TokenReviewerOptions options_;
  TtlCache<std::string, TokenReviewOutcome> cache_;
  std::atomic<std::size_t> reviews_{0};
  std::atomic<std::size_t> cache_hits_{0};
};

}  // namespace metrics_adapter::auth
