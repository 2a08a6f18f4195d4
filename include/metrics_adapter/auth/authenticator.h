#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "metrics_adapter/auth/reviews.h"
#include "metrics_adapter/auth/user_info.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::auth {

// Whom to trust for what (docs/api-contract.md "Authentication (delegated)"). From flags, or from
// the kube-system/extension-apiserver-authentication ConfigMap.
struct AuthenticationConfig {
  std::string client_ca_pem;               // client certificates: user = CN, groups = O
  std::string requestheader_ca_pem;        // the front proxy's (aggregator's) client certificate
  std::vector<std::string> allowed_names;  // front-proxy CNs; empty = any CN signed by the CA
  std::vector<std::string> username_headers = {"X-Remote-User"};
  std::vector<std::string> group_headers = {"X-Remote-Group"};
  std::vector<std::string> extra_header_prefixes = {"X-Remote-Extra-"};
  std::vector<std::string> uid_headers;  // requestheader-uid-headers; empty = no UID
};

// Reads the data of the extension-apiserver-authentication ConfigMap (a ConfigMap JSON
// object): client-ca-file, requestheader-client-ca-file, and the requestheader-* lists, which
// are JSON arrays inside strings ("null" or "" = empty list). Missing keys keep the defaults; a
// missing requestheader-client-ca-file leaves front-proxy authentication off. Throws
// std::invalid_argument naming the key on bad data (also a CA bundle without a certificate).
AuthenticationConfig parseAuthenticationConfigMap(const nlohmann::json& configmap);

// Checks a CA bundle (client-ca-file, requestheader-client-ca-file) as the authenticator reads
// it; throws std::invalid_argument when it holds no certificate or a corrupt one.
void checkCaBundle(const std::string& pem);

struct AuthenticatorOptions {
  std::chrono::milliseconds token_cache_ttl{std::chrono::seconds(10)};  // allow and deny
  std::size_t token_cache_entries = 4096;
  std::chrono::milliseconds review_timeout{std::chrono::seconds(5)};
  std::vector<std::string> token_audiences;  // TokenReview spec.audiences; empty = API server's
  // Time source of the token cache (tests inject one).
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
};

struct AuthenticationResult {
  enum class Outcome {
    kAuthenticated,  // user set
    kAnonymous,      // no credentials at all: user is system:anonymous
    kRejected,       // credentials presented and refused: answer 401
    kUnavailable,    // a TokenReview could not be made: answer 503
    kNeedsReview,    // only with Reviews::kCachedOnly: the token's review is not cached
  };
  Outcome outcome = Outcome::kAnonymous;
  UserInfo user = anonymousUser();
  std::string reason;  // for logs only, never for clients
};

// Delegated authentication, in upstream's order: front-proxy client certificate plus
// X-Remote-* headers, then a client certificate signed by the client CA, then a bearer token
// (TokenReview, results cached), else anonymous. Headers are honoured ONLY with a front-proxy
// certificate that verifies against the request-header CA with an allowed CN.
// A certificate that verifies against neither configured CA is an error, so a request with one
// and no other credential is kRejected (as upstream: "a bad client cert could cause 401").
// Authenticated users other than system:anonymous get system:authenticated appended unless
// they have it or system:unauthenticated (upstream's group adder, for every method).
// Thread-safe; setConfig swaps the trust in place (ConfigMap refresh). The constructor and
// setConfig throw std::invalid_argument when a non-empty CA bundle holds no certificate;
// setConfig then keeps the previous trust.
class Authenticator {
 public:
  // `api` may be null: bearer tokens are then rejected.
  Authenticator(std::shared_ptr<kube::KubeApi> api, const AuthenticatorOptions& options,
                AuthenticationConfig config);
  ~Authenticator();

  void setConfig(AuthenticationConfig config);
  AuthenticationResult authenticate(const server::HttpRequest& request,
                                    Reviews reviews = Reviews::kMayAsk);

  struct Stats {
    std::size_t token_reviews = 0;
    std::size_t cache_hits = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace metrics_adapter::auth
