#include "auth/token_review.h"

#include <openssl/evp.h>

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <utility>

#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::auth {
namespace {

using Json = nlohmann::json;

bool isBlank(char c) { return c == ' ' || c == '\t'; }

// Visible ASCII only: what RFC 6750 tokens are made of. Anything else could not be sent as JSON
// text faithfully, so it is refused rather than reviewed.
bool isPlausibleToken(std::string_view token) {
  return std::all_of(token.begin(), token.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string stringAt(const Json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::vector<std::string> stringsOf(const Json& value) {
  std::vector<std::string> strings;
  if (!value.is_array()) return strings;
  for (const Json& item : value) {
    if (item.is_string()) strings.push_back(item.get<std::string>());
  }
  return strings;
}

UserInfo userOf(const Json& user) {
  UserInfo info;
  info.name = stringAt(user, "username");
  info.uid = stringAt(user, "uid");
  if (const auto groups = user.find("groups"); groups != user.end()) {
    info.groups = stringsOf(*groups);
  }
  if (const auto extra = user.find("extra"); extra != user.end() && extra->is_object()) {
    for (const auto& [key, values] : extra->items()) info.extra[key] = stringsOf(values);
  }
  return info;
}

bool sharesOne(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&b](const std::string& item) {
    return std::find(b.begin(), b.end(), item) != b.end();
  });
}

TokenReviewOutcome rejected(std::string reason) {
  TokenReviewOutcome outcome;
  outcome.kind = TokenReviewOutcome::Kind::kRejected;
  outcome.reason = std::move(reason);
  return outcome;
}

}  // namespace

std::string_view bearerToken(std::string_view authorization) {
  while (!authorization.empty() && isBlank(authorization.front())) authorization.remove_prefix(1);
  while (!authorization.empty() && isBlank(authorization.back())) authorization.remove_suffix(1);
  const std::size_t space = authorization.find(' ');
  if (space == std::string_view::npos) return {};
  if (!text::equalsIgnoringAsciiCase(authorization.substr(0, space), "bearer")) return {};
  const std::string_view rest = authorization.substr(space + 1);
  return rest.substr(0, rest.find(' '));  // "Bearer  x" gives an empty token, as upstream
}

Json tokenReviewRequest(const std::string& token, const std::vector<std::string>& audiences) {
  Json spec = {{"token", token}};
  if (!audiences.empty()) spec["audiences"] = audiences;
  return {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", spec}};
}

TokenReviewOutcome readTokenReview(const Json& answer, const std::vector<std::string>& audiences) {
  if (!answer.is_object()) return rejected("TokenReview answer is not an object");
  const auto status = answer.find("status");
  if (status == answer.end() || !status->is_object()) {
    return rejected("TokenReview answer has no status");
  }
  const auto authenticated = status->find("authenticated");
  if (authenticated == status->end() || *authenticated != true) {
    const std::string error = stringAt(*status, "error");
    return rejected(error.empty() ? "token not authenticated"
                                  : "token not authenticated: " + error);
  }
  const auto user = status->find("user");
  if (user == status->end() || !user->is_object()) {
    return rejected("TokenReview authenticated without a user");
  }
  TokenReviewOutcome outcome;
  outcome.user = userOf(*user);
  if (outcome.user.name.empty()) return rejected("TokenReview authenticated an empty username");
  if (!audiences.empty()) {
    const auto answered = status->find("audiences");
    if (answered == status->end() || !sharesOne(stringsOf(*answered), audiences)) {
      return rejected("token not valid for the requested audiences");
    }
  }
  outcome.kind = TokenReviewOutcome::Kind::kAuthenticated;
  return outcome;
}

std::string sha256(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

TokenReviewer::TokenReviewer(std::shared_ptr<kube::KubeApi> api, TokenReviewerOptions options)
    : api_(std::move(api)),
      options_(std::move(options)),
      cache_(options_.max_entries, options_.now) {}

TokenReviewOutcome TokenReviewer::review(const std::string& token, Reviews reviews) {
  if (api_ == nullptr) return rejected("no Kubernetes API to review bearer tokens");
  if (token.size() > kMaxTokenBytes) return rejected("bearer token too long");
  if (!isPlausibleToken(token)) return rejected("bearer token has invalid characters");
  const std::string key = sha256(token);
  if (std::optional<TokenReviewOutcome> cached = cache_.get(key)) {
    ++cache_hits_;
    return std::move(*cached);
  }
  if (reviews == Reviews::kCachedOnly) return {TokenReviewOutcome::Kind::kNotCached, {}, {}};
  TokenReviewOutcome outcome = ask(token);
  if (outcome.kind != TokenReviewOutcome::Kind::kUnavailable) {
    cache_.put(key, outcome, options_.ttl);
  }
  return outcome;
}

TokenReviewOutcome TokenReviewer::ask(const std::string& token) {
  ++reviews_;
  Json answer;
  try {
    answer = api_->post(std::string(kTokenReviewPath),
                        tokenReviewRequest(token, options_.audiences), options_.timeout);
  } catch (const std::exception& e) {
    TokenReviewOutcome outcome;
    outcome.kind = TokenReviewOutcome::Kind::kUnavailable;
    outcome.reason = std::string("TokenReview failed: ") + e.what();
    return outcome;
  }
  return readTokenReview(answer, options_.audiences);
}

}  // namespace metrics_adapter::auth
