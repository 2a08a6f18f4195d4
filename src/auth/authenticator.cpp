#include "metrics_adapter/auth/authenticator.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "auth/token_review.h"
#include "auth/x509_verifier.h"
#include "metrics_adapter/server/percent_decode.h"
#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::auth {
namespace {

constexpr std::string_view kAuthenticatedGroup = "system:authenticated";
constexpr std::string_view kUnauthenticatedGroup = "system:unauthenticated";

using AuthnOutcome = AuthenticationResult::Outcome;

std::string_view trimmed(std::string_view text) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

bool isBlank(std::string_view text) { return trimmed(text).empty(); }

// The extra key of a header after its prefix: lower-cased, then percent-unescaped; kept
// lower-cased but escaped when the escaping is malformed (upstream records it all the same).
std::string extraKey(std::string_view rest) {
  std::string key = text::lowerAscii(rest);
  std::optional<std::string> unescaped = server::percentDecode(key, false);
  return unescaped ? std::move(*unescaped) : key;
}

// The first non-empty value among `names` (first line of each), as upstream's headerValue.
std::string firstValue(const server::HttpRequest& request, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const std::string_view header = trimmed(name);
    if (header.empty()) continue;
    std::string value = request.header(header);
    if (!value.empty()) return value;
  }
  return {};
}

// The user the front proxy asserts with its headers; nullopt when no username header is set.
std::optional<UserInfo> userFromHeaders(const server::HttpRequest& request,
                                        const AuthenticationConfig& config) {
  UserInfo user;
  user.name = firstValue(request, config.username_headers);
  if (user.name.empty()) return std::nullopt;
  user.uid = firstValue(request, config.uid_headers);
  // Every line is one group: the aggregator adds one line per group and never joins them.
  for (const std::string& name : config.group_headers) {
    const std::string_view header = trimmed(name);
    if (header.empty()) continue;
    for (const auto& [key, value] : request.headers) {
      if (!value.empty() && text::equalsIgnoringAsciiCase(key, header))
        user.groups.push_back(value);
    }
  }
  for (const std::string& prefix_text : config.extra_header_prefixes) {
    const std::string_view prefix = trimmed(prefix_text);
    if (prefix.empty()) continue;  // would turn every header into an extra
    for (const auto& [key, value] : request.headers) {
      if (key.size() > prefix.size() && text::startsWithIgnoringAsciiCase(key, prefix)) {
        user.extra[extraKey(std::string_view(key).substr(prefix.size()))].push_back(value);
      }
    }
  }
  return user;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

AuthenticationResult authenticated(UserInfo user, std::string reason) {
  if (user.name != anonymousUser().name && !contains(user.groups, kAuthenticatedGroup) &&
      !contains(user.groups, kUnauthenticatedGroup)) {
    user.groups.emplace_back(kAuthenticatedGroup);
  }
  return {AuthnOutcome::kAuthenticated, std::move(user), std::move(reason)};
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) {
    if (!text.empty()) text += "; ";
    text += part;
  }
  return text;
}

}  // namespace

// A configuration made ready for use: the CA bundles parsed once. Outside the anonymous
// namespace because Authenticator::Impl holds one (g++ warns of that when the module is
// compiled as one batch, MA_UNITY_ALL).
struct AuthenticatorTrust {
  AuthenticationConfig config;
  std::unique_ptr<X509Verifier> request_header;  // null: no front-proxy authentication
  std::unique_ptr<X509Verifier> client;          // null: no client-certificate authentication
};

namespace {

using Trust = AuthenticatorTrust;

std::unique_ptr<X509Verifier> verifierFor(const std::string& pem, const char* what) {
  if (isBlank(pem)) return nullptr;
  try {
    return std::make_unique<X509Verifier>(pem);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(what) + ": " + e.what());
  }
}

std::shared_ptr<const Trust> makeTrust(AuthenticationConfig config) {
  auto trust = std::make_shared<Trust>();
  trust->request_header = verifierFor(config.requestheader_ca_pem, "requestheader client CA");
  trust->client = verifierFor(config.client_ca_pem, "client CA");
  trust->config = std::move(config);
  return trust;
}

TokenReviewerOptions reviewerOptions(const AuthenticatorOptions& options) {
  TokenReviewerOptions reviewer;
  reviewer.ttl = options.token_cache_ttl;
  reviewer.max_entries = options.token_cache_entries;
  reviewer.timeout = options.review_timeout;
  reviewer.audiences = options.token_audiences;
  if (options.now) reviewer.now = options.now;
  return reviewer;
}

}  // namespace

struct Authenticator::Impl {
  Impl(std::shared_ptr<kube::KubeApi> api, const AuthenticatorOptions& options,
       AuthenticationConfig config)
      : trust(makeTrust(std::move(config))), reviewer(std::move(api), reviewerOptions(options)) {}

  std::shared_ptr<const Trust> currentTrust() const {
    std::lock_guard lock(mutex);
    return trust;
  }

  // Front proxy, then client CA. Failed verifications are recorded in `errors`.
  std::optional<AuthenticationResult> byCertificate(const server::HttpRequest& request,
                                                    const Trust& current,
                                                    std::vector<std::string>& errors) const {
    if (request.peer_certificates_pem.empty()) return std::nullopt;
    if (current.request_header == nullptr && current.client == nullptr) return std::nullopt;
    const PeerChain chain(request.peer_certificates_pem);
    if (current.request_header != nullptr) {
      const ChainVerification front_proxy = current.request_header->verify(chain);
      const std::vector<std::string>& allowed = current.config.allowed_names;
      if (!front_proxy.verified) {
        errors.push_back("front proxy: " + front_proxy.error);
      } else if (!allowed.empty() && !contains(allowed, front_proxy.subject.common_name)) {
        errors.push_back("front proxy: certificate CN \"" + front_proxy.subject.common_name +
                         "\" is not an allowed name");
      } else if (std::optional<UserInfo> user = userFromHeaders(request, current.config)) {
        return authenticated(std::move(*user),
                             "front proxy \"" + front_proxy.subject.common_name + "\"");
      }
    }
    if (current.client != nullptr) {
      const ChainVerification client = current.client->verify(chain);
      if (!client.verified) {
        errors.push_back("client certificate: " + client.error);
      } else if (!client.subject.common_name.empty()) {
        UserInfo user;
        user.name = client.subject.common_name;
        user.groups = client.subject.organizations;
        return authenticated(std::move(user), "client certificate");
      }
    }
    return std::nullopt;
  }

  mutable std::mutex mutex;
  std::shared_ptr<const Trust> trust;  // guarded by mutex; the object itself is immutable
  TokenReviewer reviewer;
};

Authenticator::Authenticator(std::shared_ptr<kube::KubeApi> api,
                             const AuthenticatorOptions& options, AuthenticationConfig config)
    : impl_(std::make_unique<Impl>(std::move(api), options, std::move(config))) {}

Authenticator::~Authenticator() = default;

void Authenticator::setConfig(AuthenticationConfig config) {
  std::shared_ptr<const Trust> trust = makeTrust(std::move(config));
  std::lock_guard lock(impl_->mutex);
  impl_->trust = std::move(trust);
}

AuthenticationResult Authenticator::authenticate(const server::HttpRequest& request,
                                                 Reviews reviews) {
  const std::shared_ptr<const Trust> trust = impl_->currentTrust();
  std::vector<std::string> errors;
  if (std::optional<AuthenticationResult> result = impl_->byCertificate(request, *trust, errors)) {
    return std::move(*result);
  }
  const std::string authorization = request.header("Authorization");
  const std::string_view token = bearerToken(authorization);
  if (!token.empty()) {
    TokenReviewOutcome review = impl_->reviewer.review(std::string(token), reviews);
    switch (review.kind) {
      case TokenReviewOutcome::Kind::kAuthenticated:
        return authenticated(std::move(review.user), "bearer token");
      case TokenReviewOutcome::Kind::kUnavailable:
        return {AuthnOutcome::kUnavailable, anonymousUser(), std::move(review.reason)};
      case TokenReviewOutcome::Kind::kNotCached:
        return {AuthnOutcome::kNeedsReview, anonymousUser(), {}};
      case TokenReviewOutcome::Kind::kRejected:
        errors.push_back("bearer token: " + review.reason);
        break;
    }
  }
  if (!errors.empty()) return {AuthnOutcome::kRejected, anonymousUser(), joined(errors)};
  return {AuthnOutcome::kAnonymous, anonymousUser(), {}};
}

Authenticator::Stats Authenticator::stats() const {
  return {impl_->reviewer.reviews(), impl_->reviewer.cacheHits()};
}

}  // namespace metrics_adapter::auth
