#include "metrics_adapter/auth/authenticator.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "unit/net/test_certificates.h"

namespace metrics_adapter::auth {
namespace {

using json = nlohmann::json;
using net::testing::issueCertificate;
using net::testing::makeAuthority;
using net::testing::TestAuthority;
using net::testing::pki_detail::CertificateSpec;
using Outcome = AuthenticationResult::Outcome;
using Strings = std::vector<std::string>;
using Headers = std::vector<std::pair<std::string, std::string>>;

// Answers TokenReviews like a kube-apiserver that knows the token "good" (and any listed in
// `users`); records every call.
class FakeKubeApi : public kube::KubeApi {
 public:
  json get(const std::string& path, std::string_view, std::chrono::milliseconds) override {
    throw kube::KubeError(404, "unexpected GET " + path);
  }

  json post(const std::string& path, const json& body, std::chrono::milliseconds) override {
    std::lock_guard lock(mutex_);
    paths_.push_back(path);
    bodies_.push_back(body);
    if (failure) throw kube::KubeError(0, "connection refused");
    const std::string token = body["spec"]["token"].get<std::string>();
    const auto user = users.find(token);
    json status = {{"authenticated", user != users.end()}};
    if (user != users.end()) status["user"] = user->second;
    if (user == users.end()) status["error"] = "invalid bearer token";
    if (!answer_audiences.is_null()) status["audiences"] = answer_audiences;
    return {
        {"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"status", status}};
  }

  std::size_t calls() const {
    std::lock_guard lock(mutex_);
    return bodies_.size();
  }
  json lastBody() const {
    std::lock_guard lock(mutex_);
    return bodies_.back();
  }
  std::string lastPath() const {
    std::lock_guard lock(mutex_);
    return paths_.back();
  }

  std::map<std::string, json> users = {
      {"good",
       {{"username", "system:serviceaccount:kube-system:horizontal-pod-autoscaler"},
        {"uid", "u-1"},
        {"groups", {"system:serviceaccounts", "system:serviceaccounts:kube-system"}},
        {"extra", {{"authentication.kubernetes.io/credential-id", {"JTI=1"}}}}}}};
  bool failure = false;
  json answer_audiences;  // status.audiences when not null

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> paths_;
  std::vector<json> bodies_;
};

CertificateSpec clientSpec(const std::string& common_name, Strings organizations = {}) {
  return CertificateSpec{
      common_name, std::move(organizations), {{NID_ext_key_usage, "clientAuth"}}};
}

// The set-up of docs/api-contract.md "Auth conformance cases": front-proxy CA with leaf CN
// front-proxy-client, client CA with leaf CN alice / O devs, allowed names ["front-proxy-client"].
class AuthenticatorTest : public ::testing::Test {
 protected:
  AuthenticatorTest() {
    config_.client_ca_pem = client_ca_.pem();
    config_.requestheader_ca_pem = front_proxy_ca_.pem();
    config_.allowed_names = {"front-proxy-client"};
    options_.now = [this] { return now_; };
  }

  Authenticator& authenticator() {
    if (!authenticator_) authenticator_ = std::make_unique<Authenticator>(api_, options_, config_);
    return *authenticator_;
  }

  AuthenticationResult authenticate(Headers headers, Strings chain = {},
                                    Reviews reviews = Reviews::kMayAsk) {
    server::HttpRequest request;
    request.method = "GET";
    request.target = "/apis/custom.metrics.k8s.io/v1beta1";
    request.headers = std::move(headers);
    request.peer_certificates_pem = std::move(chain);
    return authenticator().authenticate(request, reviews);
  }

  Strings frontProxyChain() const { return {front_proxy_leaf_}; }
  Strings aliceChain() const { return {alice_leaf_}; }

  TestAuthority front_proxy_ca_ = makeAuthority("front-proxy-ca");
  TestAuthority client_ca_ = makeAuthority("client-ca");
  std::string front_proxy_leaf_ =
      issueCertificate(front_proxy_ca_, clientSpec("front-proxy-client"));
  std::string alice_leaf_ = issueCertificate(client_ca_, clientSpec("alice", {"devs"}));
  std::shared_ptr<FakeKubeApi> api_ = std::make_shared<FakeKubeApi>();
  AuthenticationConfig config_;
  AuthenticatorOptions options_;
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1)};
  std::unique_ptr<Authenticator> authenticator_;
};

TEST_F(AuthenticatorTest, C50_FrontProxyUserWithTwoGroupLinesAndTwoExtraValues) {
  const AuthenticationResult result = authenticate({{"X-Remote-User", "alice"},
                                                    {"X-Remote-Group", "devs"},
                                                    {"X-Remote-Group", "system:authenticated"},
                                                    {"X-Remote-Extra-Scopes", "a"},
                                                    {"X-Remote-Extra-Scopes", "b"}},
                                                   frontProxyChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "alice");
  EXPECT_EQ(result.user.groups, (Strings{"devs", "system:authenticated"}));
  EXPECT_EQ(result.user.extra, (std::map<std::string, Strings>{{"scopes", {"a", "b"}}}));
  EXPECT_EQ(api_->calls(), 0u);
}

TEST_F(AuthenticatorTest, C55_SystemMastersArrivesAsAGroup) {
  const AuthenticationResult result = authenticate(
      {{"X-Remote-User", "system:admin"}, {"X-Remote-Group", "system:masters"}}, frontProxyChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "system:admin");
  // docs/api-contract.md "Authentication (delegated)": the group adder appends
  // system:authenticated for every authenticated user.
  EXPECT_EQ(result.user.groups, (Strings{"system:masters", "system:authenticated"}));
}

TEST_F(AuthenticatorTest, C56_HeadersWithoutCertificateAreIgnored) {
  const AuthenticationResult result =
      authenticate({{"X-Remote-User", "mallory"}, {"X-Remote-Group", "system:masters"}});
  EXPECT_EQ(result.outcome, Outcome::kAnonymous);
  EXPECT_EQ(result.user, anonymousUser());
  EXPECT_EQ(result.user.name, "system:anonymous");
  EXPECT_EQ(result.user.groups, Strings{"system:unauthenticated"});
}

TEST_F(AuthenticatorTest, C57_FrontProxyCertificateWithDisallowedCommonNameIsRejected) {
  const Strings evil = {issueCertificate(front_proxy_ca_, clientSpec("evil"))};
  const AuthenticationResult result = authenticate({{"X-Remote-User", "admin"}}, evil);
  EXPECT_EQ(result.outcome, Outcome::kRejected);
  EXPECT_EQ(result.user, anonymousUser());
}

TEST_F(AuthenticatorTest, C58_ClientCaCertificateAuthenticatesByItselfAndHeadersAreIgnored) {
  const AuthenticationResult result = authenticate(
      {{"X-Remote-User", "admin"}, {"X-Remote-Group", "system:masters"}}, aliceChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "alice");
  EXPECT_EQ(result.user.groups, (Strings{"devs", "system:authenticated"}));
  EXPECT_TRUE(result.user.extra.empty());
}

TEST_F(AuthenticatorTest, ClientCertificateGroupsAreEveryOrganization) {
  const Strings chain = {issueCertificate(client_ca_, clientSpec("bob", {"devs", "ops"}))};
  const AuthenticationResult result = authenticate({}, chain);
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "bob");
  EXPECT_EQ(result.user.groups, (Strings{"devs", "ops", "system:authenticated"}));
}

TEST_F(AuthenticatorTest, C59_GoodTokenIsAuthenticatedByTokenReview) {
  const AuthenticationResult result = authenticate({{"Authorization", "Bearer good"}});
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "system:serviceaccount:kube-system:horizontal-pod-autoscaler");
  EXPECT_EQ(result.user.uid, "u-1");
  EXPECT_EQ(result.user.groups,
            (Strings{"system:serviceaccounts", "system:serviceaccounts:kube-system",
                     "system:authenticated"}));
  EXPECT_EQ(
      result.user.extra,
      (std::map<std::string, Strings>{{"authentication.kubernetes.io/credential-id", {"JTI=1"}}}));
  ASSERT_EQ(api_->calls(), 1u);
  EXPECT_EQ(api_->lastPath(), "/apis/authentication.k8s.io/v1/tokenreviews");
  EXPECT_EQ(api_->lastBody(), json::parse(R"({"apiVersion":"authentication.k8s.io/v1",
      "kind":"TokenReview","spec":{"token":"good"}})"));
}

TEST_F(AuthenticatorTest, C59_BadTokenIsRejectedAndTheReasonNeverShowsTheToken) {
  const AuthenticationResult result = authenticate({{"Authorization", "Bearer bad-secret"}});
  EXPECT_EQ(result.outcome, Outcome::kRejected);
  EXPECT_EQ(result.user, anonymousUser());
  EXPECT_EQ(result.reason.find("bad-secret"), std::string::npos) << result.reason;
  EXPECT_EQ(api_->calls(), 1u);
}

TEST_F(AuthenticatorTest, C59_SecondCallWithinTtlIsACacheHitForGoodAndBadTokens) {
  for (const std::string token : {"good", "bad"}) {
    const Outcome first = authenticate({{"Authorization", "Bearer " + token}}).outcome;
    const Outcome second = authenticate({{"Authorization", "Bearer " + token}}).outcome;
    EXPECT_EQ(first, second) << token;
  }
  EXPECT_EQ(api_->calls(), 2u);
  EXPECT_EQ(authenticator().stats().token_reviews, 2u);
  EXPECT_EQ(authenticator().stats().cache_hits, 2u);
}

TEST_F(AuthenticatorTest, C59_CachedReviewExpiresAfterTheTtl) {
  options_.token_cache_ttl = std::chrono::seconds(10);
  EXPECT_EQ(authenticate({{"Authorization", "Bearer good"}}).outcome, Outcome::kAuthenticated);
  now_ += std::chrono::milliseconds(9999);
  EXPECT_EQ(authenticate({{"Authorization", "Bearer good"}}).outcome, Outcome::kAuthenticated);
  EXPECT_EQ(api_->calls(), 1u);
  now_ += std::chrono::milliseconds(1);
  EXPECT_EQ(authenticate({{"Authorization", "Bearer good"}}).outcome, Outcome::kAuthenticated);
  EXPECT_EQ(api_->calls(), 2u);
  EXPECT_EQ(authenticator().stats().cache_hits, 1u);
}

TEST_F(AuthenticatorTest, CachedOnlyNeverReviewsButUsesTheCache) {
  const Headers good = {{"Authorization", "Bearer good"}};
  EXPECT_EQ(authenticate(good, {}, Reviews::kCachedOnly).outcome, Outcome::kNeedsReview);
  EXPECT_EQ(api_->calls(), 0u);
  EXPECT_EQ(authenticate(good).outcome, Outcome::kAuthenticated);
  const AuthenticationResult cached = authenticate(good, {}, Reviews::kCachedOnly);
  EXPECT_EQ(cached.outcome, Outcome::kAuthenticated);
  EXPECT_EQ(cached.user.name, "system:serviceaccount:kube-system:horizontal-pod-autoscaler");
  EXPECT_EQ(authenticate({{"Authorization", "Bearer bad"}}).outcome, Outcome::kRejected);
  EXPECT_EQ(authenticate({{"Authorization", "Bearer bad"}}, {}, Reviews::kCachedOnly).outcome,
            Outcome::kRejected);
  EXPECT_EQ(api_->calls(), 2u);
  // Certificates and the front proxy need no call at all.
  EXPECT_EQ(authenticate({}, aliceChain(), Reviews::kCachedOnly).user.name, "alice");
  EXPECT_EQ(
      authenticate({{"X-Remote-User", "bob"}}, frontProxyChain(), Reviews::kCachedOnly).user.name,
      "bob");
  EXPECT_EQ(authenticate({}, {}, Reviews::kCachedOnly).outcome, Outcome::kAnonymous);
  EXPECT_EQ(api_->calls(), 2u);
}

TEST_F(AuthenticatorTest, RejectionIsCachedToo) {
  EXPECT_EQ(authenticate({{"Authorization", "Bearer bad"}}).outcome, Outcome::kRejected);
  api_->users["bad"] = {{"username", "late"}};
  EXPECT_EQ(authenticate({{"Authorization", "Bearer bad"}}).outcome, Outcome::kRejected);
  EXPECT_EQ(api_->calls(), 1u);
}

TEST_F(AuthenticatorTest, TokenCacheHoldsAtMostItsEntries) {
  options_.token_cache_entries = 2;
  for (const char* token : {"t1", "t2", "t3", "t1"}) {
    authenticate({{"Authorization", std::string("Bearer ") + token}});
    now_ += std::chrono::milliseconds(1);
  }
  // t1 was the soonest to expire when t3 came, so it was evicted and reviewed again.
  EXPECT_EQ(api_->calls(), 4u);
}

TEST_F(AuthenticatorTest, ApiFailureIsUnavailableAndNotCached) {
  api_->failure = true;
  const AuthenticationResult result = authenticate({{"Authorization", "Bearer good"}});
  EXPECT_EQ(result.outcome, Outcome::kUnavailable);
  EXPECT_EQ(result.user, anonymousUser());
  EXPECT_EQ(result.reason.find("good"), std::string::npos) << result.reason;
  api_->failure = false;
  EXPECT_EQ(authenticate({{"Authorization", "Bearer good"}}).outcome, Outcome::kAuthenticated);
  EXPECT_EQ(api_->calls(), 2u);
}

TEST_F(AuthenticatorTest, AudiencesAreSentAndMustBeConfirmed) {
  options_.token_audiences = {"metrics-adapter"};
  api_->answer_audiences = json::array({"metrics-adapter"});
  EXPECT_EQ(authenticate({{"Authorization", "Bearer good"}}).outcome, Outcome::kAuthenticated);
  EXPECT_EQ(api_->lastBody()["spec"]["audiences"], json::array({"metrics-adapter"}));

  api_->answer_audiences = json::array({"https://kubernetes.default.svc"});
  api_->users["other"] = api_->users["good"];
  EXPECT_EQ(authenticate({{"Authorization", "Bearer other"}}).outcome, Outcome::kRejected);
}

TEST_F(AuthenticatorTest, WithoutApiBearerTokensAreRejected) {
  api_ = nullptr;
  EXPECT_EQ(authenticate({{"Authorization", "Bearer good"}}).outcome, Outcome::kRejected);
}

struct AuthorizationHeaderCase {
  std::string name;
  std::string value;
  Outcome outcome;
  std::size_t reviews;
};

void PrintTo(const AuthorizationHeaderCase& value, std::ostream* out) { *out << value.name; }

class AuthorizationHeaderTest : public AuthenticatorTest,
                                public ::testing::WithParamInterface<AuthorizationHeaderCase> {};

// Upstream's bearer-token reader: scheme case-insensitive, the token ends at the next space, no
// token means the method does not apply.
TEST_P(AuthorizationHeaderTest, ReadsBearerTokensAsUpstream) {
  const AuthenticationResult result = authenticate({{"authorization", GetParam().value}});
  EXPECT_EQ(result.outcome, GetParam().outcome) << result.reason;
  EXPECT_EQ(api_->calls(), GetParam().reviews);
}

INSTANTIATE_TEST_SUITE_P(
    Values, AuthorizationHeaderTest,
    ::testing::Values(
        AuthorizationHeaderCase{"LowerCaseScheme", "bearer good", Outcome::kAuthenticated, 1},
        AuthorizationHeaderCase{"SurroundingBlanks", "  Bearer good  ", Outcome::kAuthenticated, 1},
        AuthorizationHeaderCase{"TextAfterToken", "Bearer good trailing", Outcome::kAuthenticated,
                                1},
        AuthorizationHeaderCase{"BasicScheme", "Basic Z29vZA==", Outcome::kAnonymous, 0},
        AuthorizationHeaderCase{"SchemeOnly", "Bearer", Outcome::kAnonymous, 0},
        AuthorizationHeaderCase{"EmptyToken", "Bearer  good", Outcome::kAnonymous, 0},
        AuthorizationHeaderCase{"ControlCharacter", "Bearer go\x01od", Outcome::kRejected, 0},
        AuthorizationHeaderCase{"HugeToken", "Bearer " + std::string(1 << 20, 'a'),
                                Outcome::kRejected, 0}),
    [](const ::testing::TestParamInfo<AuthorizationHeaderCase>& info) { return info.param.name; });

TEST_F(AuthenticatorTest, C60_ExtraHeaderKeyIsLowerCasedThenPercentUnescaped) {
  const AuthenticationResult result =
      authenticate({{"X-Remote-User", "alice"},
                    {"X-Remote-Extra-Authentication.kubernetes.io%2fpod-Name", "p1"}},
                   frontProxyChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.extra,
            (std::map<std::string, Strings>{{"authentication.kubernetes.io/pod-name", {"p1"}}}));
}

TEST_F(AuthenticatorTest, MalformedExtraEscapeKeepsTheLowerCasedKey) {
  const AuthenticationResult result = authenticate(
      {{"X-Remote-User", "alice"}, {"x-remote-extra-Bad%ZZ", "v"}, {"X-Remote-Extra-End%2", "w"}},
      frontProxyChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.extra,
            (std::map<std::string, Strings>{{"bad%zz", {"v"}}, {"end%2", {"w"}}}));
}

TEST_F(AuthenticatorTest, C61_EmptyAllowedNamesAcceptAnyCommonNameOfTheFrontProxyCa) {
  config_ = parseAuthenticationConfigMap(
      {{"data",
        {{"requestheader-client-ca-file", front_proxy_ca_.pem()},
         {"requestheader-allowed-names", "[]"},
         {"requestheader-username-headers", R"(["X-Remote-User"])"},
         {"requestheader-group-headers", R"(["X-Remote-Group"])"},
         {"requestheader-extra-headers-prefix", R"(["X-Remote-Extra-"])"}}}});
  const Strings anyone = {issueCertificate(front_proxy_ca_, clientSpec("anything"))};
  const AuthenticationResult result = authenticate({{"X-Remote-User", "alice"}}, anyone);
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "alice");
  // Still only the front-proxy CA: a client-CA certificate does not carry headers.
  EXPECT_EQ(authenticate({{"X-Remote-User", "alice"}}, aliceChain()).outcome, Outcome::kRejected);
}

TEST_F(AuthenticatorTest, FrontProxyUsernameIsTheFirstNonEmptyHeaderCaseInsensitively) {
  config_.username_headers = {"X-Remote-User", "X-Forwarded-User"};
  const AuthenticationResult result =
      authenticate({{"x-remote-user", ""}, {"X-FORWARDED-USER", "bob"}, {"X-Remote-User", "late"}},
                   frontProxyChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "bob");
}

TEST_F(AuthenticatorTest, FrontProxyUidComesFromTheUidHeaders) {
  config_.uid_headers = {"X-Remote-Uid"};
  const AuthenticationResult result =
      authenticate({{"X-Remote-User", "alice"}, {"x-remote-uid", "42"}}, frontProxyChain());
  EXPECT_EQ(result.user.uid, "42");
}

// docs/api-contract.md "Header handling": one group per line, never comma-split; empty lines
// are no group.
TEST_F(AuthenticatorTest, FrontProxyGroupLinesAreNeverSplit) {
  config_.group_headers = {"X-Remote-Group", "X-Other-Group"};
  const AuthenticationResult result = authenticate({{"X-Remote-User", "alice"},
                                                    {"X-Other-Group", "third"},
                                                    {"x-remote-group", "a,b"},
                                                    {"X-Remote-Group", ""},
                                                    {"X-REMOTE-GROUP", "c"}},
                                                   frontProxyChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.groups, (Strings{"a,b", "c", "third", "system:authenticated"}));
}

TEST_F(AuthenticatorTest, GroupAdderLeavesUnauthenticatedAndAnonymousAlone) {
  EXPECT_EQ(authenticate({{"X-Remote-User", "alice"}, {"X-Remote-Group", "system:unauthenticated"}},
                         frontProxyChain())
                .user.groups,
            Strings{"system:unauthenticated"});
  EXPECT_TRUE(
      authenticate({{"X-Remote-User", "system:anonymous"}}, frontProxyChain()).user.groups.empty());
}

TEST_F(AuthenticatorTest, FrontProxyWithoutUsernameHeaderDoesNotApply) {
  config_.client_ca_pem.clear();
  const AuthenticationResult result =
      authenticate({{"X-Remote-Group", "system:masters"}}, frontProxyChain());
  EXPECT_EQ(result.outcome, Outcome::kAnonymous);
  EXPECT_EQ(result.user, anonymousUser());
}

TEST_F(AuthenticatorTest, FrontProxyCertificateWithoutHeadersStillAllowsABearerToken) {
  config_.client_ca_pem.clear();
  const AuthenticationResult result =
      authenticate({{"Authorization", "Bearer good"}}, frontProxyChain());
  EXPECT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
}

TEST_F(AuthenticatorTest, ExpiredFrontProxyCertificateIsRejected) {
  CertificateSpec expired = clientSpec("front-proxy-client");
  expired.not_before_seconds = -7200;
  expired.not_after_seconds = -60;
  const AuthenticationResult result =
      authenticate({{"X-Remote-User", "alice"}}, {issueCertificate(front_proxy_ca_, expired)});
  EXPECT_EQ(result.outcome, Outcome::kRejected);
}

TEST_F(AuthenticatorTest, FrontProxyCertificateWithoutClientAuthUsageIsRejected) {
  const CertificateSpec server_only{"front-proxy-client", {}, {{NID_ext_key_usage, "serverAuth"}}};
  const AuthenticationResult result =
      authenticate({{"X-Remote-User", "alice"}}, {issueCertificate(front_proxy_ca_, server_only)});
  EXPECT_EQ(result.outcome, Outcome::kRejected);
}

TEST_F(AuthenticatorTest, FrontProxyChainWithAnIntermediateVerifies) {
  const TestAuthority intermediate = makeAuthority("front-proxy-intermediate", &front_proxy_ca_);
  const Strings chain = {issueCertificate(intermediate, clientSpec("front-proxy-client")),
                         intermediate.pem()};
  const AuthenticationResult result = authenticate({{"X-Remote-User", "alice"}}, chain);
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "alice");
}

// A bad client certificate causes a 401 (docs/api-contract.md "Authentication (delegated)"):
// every applicable method failed with an error.
TEST_F(AuthenticatorTest, CertificateOfAnUnknownCaIsRejected) {
  const TestAuthority stranger = makeAuthority("front-proxy-ca");
  const AuthenticationResult result = authenticate(
      {{"X-Remote-User", "admin"}}, {issueCertificate(stranger, clientSpec("front-proxy-client"))});
  EXPECT_EQ(result.outcome, Outcome::kRejected);
  EXPECT_EQ(result.user, anonymousUser());
}

TEST_F(AuthenticatorTest, CertificateOfAnUnknownCaStillAllowsABearerToken) {
  const TestAuthority stranger = makeAuthority("stranger");
  const AuthenticationResult result =
      authenticate({{"Authorization", "Bearer good"}, {"X-Remote-User", "admin"}},
                   {issueCertificate(stranger, clientSpec("front-proxy-client"))});
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated) << result.reason;
  EXPECT_EQ(result.user.name, "system:serviceaccount:kube-system:horizontal-pod-autoscaler");
}

TEST_F(AuthenticatorTest, GarbagePeerCertificatesAreRejectedWithoutCrashing) {
  for (const Strings& chain :
       {Strings{"garbage"}, Strings{front_proxy_leaf_, "garbage"},
        Strings{std::string(1 << 20, '-')}, Strings(1000, front_proxy_leaf_)}) {
    EXPECT_EQ(authenticate({{"X-Remote-User", "admin"}}, chain).outcome, Outcome::kRejected);
  }
}

TEST_F(AuthenticatorTest, WithoutAnyCaCertificatesAreNotCredentials) {
  config_ = AuthenticationConfig{};
  EXPECT_EQ(authenticate({{"X-Remote-User", "admin"}}, {"garbage"}).outcome, Outcome::kAnonymous);
  EXPECT_EQ(authenticate({{"X-Remote-User", "admin"}}, frontProxyChain()).outcome,
            Outcome::kAnonymous);
}

TEST_F(AuthenticatorTest, ManyGroupLinesAndHugeValuesAreHandled) {
  Headers headers = {{"X-Remote-User", std::string(100000, 'u')}};
  for (int i = 0; i < 1000; ++i) headers.emplace_back("X-Remote-Group", "g" + std::to_string(i));
  headers.emplace_back("X-Remote-Extra-Big", std::string(200000, 'x'));
  const AuthenticationResult result = authenticate(std::move(headers), frontProxyChain());
  ASSERT_EQ(result.outcome, Outcome::kAuthenticated);
  ASSERT_EQ(result.user.groups.size(), 1001u);
  EXPECT_EQ(result.user.groups[999], "g999");
  EXPECT_EQ(result.user.groups.back(), "system:authenticated");
  EXPECT_EQ(result.user.extra.at("big").front().size(), 200000u);
}

TEST_F(AuthenticatorTest, SetConfigSwapsTheTrust) {
  config_.requestheader_ca_pem.clear();
  const Headers headers = {{"X-Remote-User", "alice"}};
  EXPECT_EQ(authenticate(headers, frontProxyChain()).outcome, Outcome::kRejected);

  AuthenticationConfig rotated = config_;
  rotated.requestheader_ca_pem = front_proxy_ca_.pem();
  authenticator().setConfig(rotated);
  EXPECT_EQ(authenticate(headers, frontProxyChain()).outcome, Outcome::kAuthenticated);
}

TEST_F(AuthenticatorTest, BadCaBundleThrowsAndSetConfigKeepsThePreviousTrust) {
  AuthenticationConfig bad = config_;
  bad.requestheader_ca_pem = "not a certificate";
  EXPECT_THROW(Authenticator(api_, options_, bad), std::invalid_argument);
  EXPECT_THROW(authenticator().setConfig(bad), std::invalid_argument);
  EXPECT_EQ(authenticate({{"X-Remote-User", "alice"}}, frontProxyChain()).outcome,
            Outcome::kAuthenticated);
}

TEST_F(AuthenticatorTest, ConcurrentRequestsForOneTokenAgree) {
  options_.now = std::chrono::steady_clock::now;
  Authenticator& shared = authenticator();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared] {
      server::HttpRequest request;
      request.headers = {{"Authorization", "Bearer good"}};
      for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(shared.authenticate(request).outcome, Outcome::kAuthenticated);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const Authenticator::Stats stats = shared.stats();
  EXPECT_GE(stats.token_reviews, 1u);
  EXPECT_EQ(stats.token_reviews, api_->calls());
  EXPECT_EQ(stats.token_reviews + stats.cache_hits, 200u);
}

}  // namespace
}  // namespace metrics_adapter::auth
