#include "metrics_adapter/auth/authorizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace metrics_adapter::auth {
namespace {

using nlohmann::json;
using AuthzOutcome = AuthorizationResult::Outcome;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kSarPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
constexpr const char* kC13 =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/"
    "http_requests_per_second?labelSelector=app%3Dweb";

// Records every POST and answers from a queue; an empty queue answers "allowed".
class FakeReviewKubeApi : public kube::KubeApi {
 public:
  struct Post {
    std::string path;
    json body;
    milliseconds timeout;
  };
  using Answer = std::function<json()>;

  json get(const std::string&, std::string_view, milliseconds) override {
    throw kube::KubeError(404, "not used");
  }

  json post(const std::string& path, const json& body, milliseconds timeout) override {
    // A real client serialises the body; this throws if it holds invalid UTF-8.
    (void)body.dump();
    posts.push_back({path, body, timeout});
    if (answers.empty()) return allowed();
    Answer answer = answers.front();
    answers.pop_front();
    return answer();
  }

  static json allowed() { return review(json{{"allowed", true}}); }
  static json review(json status) {
    return {{"apiVersion", "authorization.k8s.io/v1"},
            {"kind", "SubjectAccessReview"},
            {"status", std::move(status)}};
  }
  void answerWith(json body) {
    answers.emplace_back([body] { return body; });
  }
  void failWith(kube::KubeError error) {
    answers.emplace_back([error]() -> json { throw error; });
  }

  std::vector<Post> posts;
  std::deque<Answer> answers;
};

class ManualClock {
 public:
  std::function<std::chrono::steady_clock::time_point()> now() {
    return [this] { return now_; };
  }
  void advance(milliseconds by) { now_ += by; }

 private:
  std::chrono::steady_clock::time_point now_{seconds(1000)};
};

// The user of docs/api-contract.md "Auth conformance cases" C50, as the front-proxy headers give
// it.
UserInfo alice() {
  return {"alice", "", {"devs", "system:authenticated"}, {{"scopes", {"a", "b"}}}};
}

class AuthorizerTest : public ::testing::Test {
 protected:
  AuthorizerTest() { options_.review_timeout = milliseconds(1234); }

  Authorizer& authorizer() {
    if (!authorizer_) authorizer_ = std::make_unique<Authorizer>(api_, options_, clock_.now());
    return *authorizer_;
  }
  AuthorizationResult authorize(const UserInfo& user, const std::string& target,
                                const std::string& method = "GET") {
    return authorizer().authorize(user, server::parseRequestInfo(method, target));
  }

  std::shared_ptr<FakeReviewKubeApi> api_ = std::make_shared<FakeReviewKubeApi>();
  AuthorizerOptions options_;
  ManualClock clock_;
  std::unique_ptr<Authorizer> authorizer_;
};

TEST_F(AuthorizerTest, C50_ReviewCarriesTheUserAndTheResourceAttributes) {
  const auto result = authorize(alice(), kC13);

  EXPECT_EQ(result.outcome, AuthzOutcome::kAllowed);
  ASSERT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(api_->posts[0].path, kSarPath);
  EXPECT_EQ(api_->posts[0].timeout, milliseconds(1234));
  EXPECT_EQ(api_->posts[0].body, json::parse(R"({
    "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
    "spec": {"user": "alice", "groups": ["devs", "system:authenticated"],
             "extra": {"scopes": ["a", "b"]},
             "resourceAttributes": {"namespace": "default", "verb": "get",
                                    "group": "custom.metrics.k8s.io", "version": "v1beta1",
                                    "resource": "pods", "subresource": "http_requests_per_second",
                                    "name": "*"}}})"));
}

TEST_F(AuthorizerTest, C51_DeniedReviewGivesUpstreamsForbiddenMessage) {
  api_->answerWith(FakeReviewKubeApi::review(json{{"allowed", false}}));
  const auto attributes = server::parseRequestInfo("GET", kC13);

  const auto result = authorizer().authorize(alice(), attributes);

  EXPECT_EQ(result.outcome, AuthzOutcome::kDenied);
  EXPECT_EQ(result.reason, "");
  EXPECT_EQ(forbiddenMessage(alice(), attributes, result.reason),
            "pods.custom.metrics.k8s.io \"*\" is forbidden: User \"alice\" cannot get resource "
            "\"pods/http_requests_per_second\" in API group \"custom.metrics.k8s.io\" in the "
            "namespace \"default\"");
}

TEST_F(AuthorizerTest, C52_NamespaceMetricIsReviewedAsThePseudoResourceMetrics) {
  authorize(alice(), "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/metrics/queue_length");

  ASSERT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(api_->posts[0].body["spec"]["resourceAttributes"], json::parse(R"({
    "namespace": "default", "verb": "get", "group": "custom.metrics.k8s.io",
    "version": "v1beta1", "resource": "metrics", "name": "queue_length"})"));
}

TEST_F(AuthorizerTest, C53_ExternalMetricIsANamelessList) {
  authorize(alice(),
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/"
            "queue_messages_ready?labelSelector=queue%3Dorders");

  ASSERT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(api_->posts[0].body["spec"]["resourceAttributes"], json::parse(R"({
    "namespace": "default", "verb": "list", "group": "external.metrics.k8s.io",
    "version": "v1beta1", "resource": "queue_messages_ready"})"));
}

TEST_F(AuthorizerTest, C54_DiscoveryIsANonResourceReview) {
  authorize(alice(), "/apis/custom.metrics.k8s.io/v1beta1");

  ASSERT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(api_->posts[0].body, json::parse(R"({
    "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
    "spec": {"user": "alice", "groups": ["devs", "system:authenticated"],
             "extra": {"scopes": ["a", "b"]},
             "nonResourceAttributes": {"path": "/apis/custom.metrics.k8s.io/v1beta1",
                                       "verb": "get"}}})"));
}

TEST_F(AuthorizerTest, C55_SystemMastersIsAllowedWithoutAReview) {
  const UserInfo admin{"front-proxy-user", "", {"system:masters", "system:authenticated"}, {}};

  EXPECT_EQ(authorize(admin, kC13).outcome, AuthzOutcome::kAllowed);
  EXPECT_EQ(authorize(admin, "/apis/custom.metrics.k8s.io/v1beta1").outcome,
            AuthzOutcome::kAllowed);
  EXPECT_TRUE(api_->posts.empty());
  EXPECT_EQ(authorizer().stats().reviews, 0u);
}

TEST_F(AuthorizerTest, C56_AnonymousIsReviewedAndDeniedButMayProbeHealth) {
  api_->answerWith(FakeReviewKubeApi::review(json{{"allowed", false}}));
  const auto attributes = server::parseRequestInfo("GET", kC13);

  const auto metric = authorizer().authorize(anonymousUser(), attributes);
  const auto health = authorize(anonymousUser(), "/healthz");

  EXPECT_EQ(metric.outcome, AuthzOutcome::kDenied);
  EXPECT_EQ(health.outcome, AuthzOutcome::kAllowed);
  ASSERT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(api_->posts[0].body["spec"]["user"], "system:anonymous");
  EXPECT_EQ(api_->posts[0].body["spec"]["groups"], json::array({"system:unauthenticated"}));
  EXPECT_FALSE(api_->posts[0].body["spec"].contains("extra"));
  EXPECT_EQ(forbiddenMessage(anonymousUser(), attributes, metric.reason),
            "pods.custom.metrics.k8s.io \"*\" is forbidden: User \"system:anonymous\" cannot get "
            "resource \"pods/http_requests_per_second\" in API group \"custom.metrics.k8s.io\" in "
            "the namespace \"default\"");
}

TEST_F(AuthorizerTest, CachedOnlyNeverReviewsButUsesTheCacheAndTheRules) {
  const auto discovery = server::parseRequestInfo("GET", "/apis/custom.metrics.k8s.io/v1beta1");
  EXPECT_EQ(authorizer().authorize(alice(), discovery, Reviews::kCachedOnly).outcome,
            AuthzOutcome::kNeedsReview);
  EXPECT_TRUE(api_->posts.empty());
  EXPECT_EQ(authorizer().authorize(alice(), discovery).outcome, AuthzOutcome::kAllowed);
  EXPECT_EQ(authorizer().authorize(alice(), discovery, Reviews::kCachedOnly).outcome,
            AuthzOutcome::kAllowed);
  EXPECT_EQ(api_->posts.size(), 1u);

  api_->answerWith(FakeReviewKubeApi::review(json{{"allowed", false}, {"reason", "no"}}));
  const UserInfo mallory{"mallory", "", {"system:authenticated"}, {}};
  EXPECT_EQ(authorizer().authorize(mallory, discovery).outcome, AuthzOutcome::kDenied);
  const auto denied = authorizer().authorize(mallory, discovery, Reviews::kCachedOnly);
  EXPECT_EQ(denied.outcome, AuthzOutcome::kDenied);
  EXPECT_EQ(denied.reason, "no");

  // Always-allowed paths and system:masters need no review.
  EXPECT_EQ(
      authorizer()
          .authorize(mallory, server::parseRequestInfo("GET", "/healthz"), Reviews::kCachedOnly)
          .outcome,
      AuthzOutcome::kAllowed);
  const UserInfo admin{"admin", "", {"system:masters"}, {}};
  EXPECT_EQ(authorizer().authorize(admin, discovery, Reviews::kCachedOnly).outcome,
            AuthzOutcome::kAllowed);
  EXPECT_EQ(api_->posts.size(), 2u);
}

TEST_F(AuthorizerTest, UidIsSentWhenSetAndEmptyFieldsAreOmitted) {
  const UserInfo user{"bob", "42", {}, {}};

  authorize(user, "/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/node_load");

  ASSERT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(api_->posts[0].body["spec"], json::parse(R"({
    "user": "bob", "uid": "42",
    "resourceAttributes": {"verb": "get", "group": "custom.metrics.k8s.io", "version": "v1beta1",
                           "resource": "nodes", "subresource": "node_load", "name": "n1"}})"));
}

TEST_F(AuthorizerTest, DeniedReviewReasonIsReturnedAndAppendedToTheMessage) {
  api_->answerWith(FakeReviewKubeApi::review(
      json{{"allowed", false}, {"denied", true}, {"reason", "no RBAC policy matched"}}));
  const auto attributes = server::parseRequestInfo("GET", "/apis/custom.metrics.k8s.io/v1beta1");

  const auto result = authorizer().authorize(alice(), attributes);

  EXPECT_EQ(result.outcome, AuthzOutcome::kDenied);
  EXPECT_EQ(result.reason, "no RBAC policy matched");
  EXPECT_EQ(forbiddenMessage(alice(), attributes, result.reason),
            "forbidden: User \"alice\" cannot get path \"/apis/custom.metrics.k8s.io/v1beta1\": "
            "no RBAC policy matched");
}

TEST_F(AuthorizerTest, AnswerWithoutStatusIsNoOpinionAndDenies) {
  api_->answerWith(json{{"kind", "SubjectAccessReview"}});
  EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kDenied);
}

TEST_F(AuthorizerTest, HugeReasonIsBoundedToOneLine) {
  api_->answerWith(FakeReviewKubeApi::review(
      json{{"allowed", false}, {"reason", "line one\nline two" + std::string(100000, 'x')}}));

  const auto result = authorize(alice(), kC13);

  EXPECT_EQ(result.outcome, AuthzOutcome::kDenied);
  EXPECT_LE(result.reason.size(), 1100u);
  EXPECT_EQ(result.reason.rfind("line one line two", 0), 0u);
}

TEST_F(AuthorizerTest, AllowedAnswersAreCachedForAllowedTtl) {
  options_.allowed_ttl = seconds(10);

  EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kAllowed);
  clock_.advance(milliseconds(9999));
  api_->answerWith(FakeReviewKubeApi::review(json{{"allowed", false}}));  // would deny if asked
  EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kAllowed);
  EXPECT_EQ(api_->posts.size(), 1u);
  clock_.advance(milliseconds(1));
  EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kDenied);
  EXPECT_EQ(api_->posts.size(), 2u);
  EXPECT_EQ(authorizer().stats().reviews, 2u);
  EXPECT_EQ(authorizer().stats().cache_hits, 1u);
}

TEST_F(AuthorizerTest, DeniedAnswersAreCachedForDeniedTtlWithTheirReason) {
  options_.allowed_ttl = seconds(60);
  options_.denied_ttl = seconds(2);
  api_->answerWith(FakeReviewKubeApi::review(json{{"allowed", false}, {"reason", "nope"}}));

  EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kDenied);
  clock_.advance(milliseconds(1999));
  const auto cached = authorize(alice(), kC13);
  EXPECT_EQ(cached.outcome, AuthzOutcome::kDenied);
  EXPECT_EQ(cached.reason, "nope");
  EXPECT_EQ(api_->posts.size(), 1u);
  clock_.advance(milliseconds(1));
  EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kAllowed);
  EXPECT_EQ(api_->posts.size(), 2u);
}

TEST_F(AuthorizerTest, ZeroTtlDisablesCaching) {
  options_.allowed_ttl = milliseconds(0);
  authorize(alice(), kC13);
  authorize(alice(), kC13);
  EXPECT_EQ(api_->posts.size(), 2u);
  EXPECT_EQ(authorizer().stats().cache_hits, 0u);
}

TEST_F(AuthorizerTest, GroupOrderDoesNotMatterToTheCache) {
  UserInfo reordered = alice();
  std::swap(reordered.groups[0], reordered.groups[1]);

  authorize(alice(), kC13);
  authorize(reordered, kC13);

  EXPECT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(authorizer().stats().cache_hits, 1u);
}

TEST_F(AuthorizerTest, EveryPartOfTheQuestionIsInTheCacheKey) {
  const std::string base = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/";
  UserInfo other_name = alice();
  other_name.name = "alicia";
  UserInfo with_uid = alice();
  with_uid.uid = "u1";
  UserInfo other_groups = alice();
  other_groups.groups.push_back("admins");
  UserInfo other_extra = alice();
  other_extra.extra["scopes"] = {"a"};

  authorize(alice(), base + "web-1/m");
  authorize(other_name, base + "web-1/m");
  authorize(with_uid, base + "web-1/m");
  authorize(other_groups, base + "web-1/m");
  authorize(other_extra, base + "web-1/m");
  authorize(alice(), base + "web-2/m");  // name
  authorize(alice(), base + "web-1/n");  // subresource
  authorize(alice(), "/apis/custom.metrics.k8s.io/v1beta1/namespaces/kube-system/pods/web-1/m");
  authorize(alice(), "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/web-1/m");
  authorize(alice(), "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/nodes/web-1/m");
  authorize(alice(), "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/pods/web-1/m");
  authorize(alice(), base + "web-1/m", "POST");  // verb
  authorize(alice(), "/apis/custom.metrics.k8s.io/v1beta1");
  authorize(alice(), "/apis/external.metrics.k8s.io/v1beta1");  // path

  EXPECT_EQ(api_->posts.size(), 14u);
  EXPECT_EQ(authorizer().stats().cache_hits, 0u);
}

TEST_F(AuthorizerTest, CacheIsBounded) {
  options_.cache_entries = 1;
  const std::string first = "/apis/custom.metrics.k8s.io/v1beta1/nodes/a/m";
  const std::string second = "/apis/custom.metrics.k8s.io/v1beta1/nodes/b/m";

  authorize(alice(), first);
  authorize(alice(), second);  // evicts the first
  authorize(alice(), first);

  EXPECT_EQ(api_->posts.size(), 3u);
}

TEST_F(AuthorizerTest, UnreachableApiServerIsUnavailableAndNotCached) {
  api_->failWith(kube::KubeError(0, "dial tcp 10.96.0.1:443: i/o timeout").markTimeout());

  const auto failed = authorize(alice(), kC13);
  const auto retried = authorize(alice(), kC13);

  EXPECT_EQ(failed.outcome, AuthzOutcome::kUnavailable);
  EXPECT_NE(failed.reason.find("i/o timeout"), std::string::npos) << failed.reason;
  EXPECT_EQ(retried.outcome, AuthzOutcome::kAllowed);
  EXPECT_EQ(api_->posts.size(), 2u);
  EXPECT_EQ(authorizer().stats().cache_hits, 0u);
}

TEST_F(AuthorizerTest, ApiServerRefusingTheReviewIsUnavailable) {
  api_->failWith(kube::KubeError(403, "subjectaccessreviews.authorization.k8s.io is forbidden"));
  EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kUnavailable);
}

TEST_F(AuthorizerTest, MalformedAnswersAreUnavailableAndNotCached) {
  const std::vector<json> answers = {
      json::array(),
      json("SubjectAccessReview"),
      FakeReviewKubeApi::review(json("allowed")),
      FakeReviewKubeApi::review(json{{"allowed", "true"}}),
      FakeReviewKubeApi::review(json{{"allowed", false}, {"denied", 1}}),
      FakeReviewKubeApi::review(json{{"allowed", false}, {"reason", json::array({"x"})}}),
  };
  for (const json& answer : answers) api_->answerWith(answer);

  for (const json& answer : answers) {
    EXPECT_EQ(authorize(alice(), kC13).outcome, AuthzOutcome::kUnavailable) << answer.dump();
  }
  EXPECT_EQ(authorizer().stats().cache_hits, 0u);
}

TEST_F(AuthorizerTest, DefaultAlwaysAllowPathsAreExactAndForAnyUser) {
  for (const char* path : {"/healthz", "/readyz", "/livez", "/livez?verbose"}) {
    EXPECT_EQ(authorize(anonymousUser(), path).outcome, AuthzOutcome::kAllowed) << path;
  }
  EXPECT_TRUE(api_->posts.empty());

  authorize(anonymousUser(), "/healthz/ping");  // exact entries do not cover checks below them
  EXPECT_EQ(api_->posts.size(), 1u);
}

TEST_F(AuthorizerTest, AlwaysAllowPrefixesEndInAStar) {
  options_.always_allow_paths = {"/healthz*", "metrics", "/apis/*"};

  EXPECT_EQ(authorize(anonymousUser(), "/healthz/ping").outcome, AuthzOutcome::kAllowed);
  EXPECT_EQ(authorize(anonymousUser(), "/metrics").outcome,
            AuthzOutcome::kAllowed);  // '/' optional
  EXPECT_EQ(authorize(anonymousUser(), "/apis/custom.metrics.k8s.io").outcome,
            AuthzOutcome::kAllowed);
  EXPECT_TRUE(api_->posts.empty());

  // Upstream's path authorizer has no opinion on resource requests.
  authorize(anonymousUser(), kC13);
  EXPECT_EQ(api_->posts.size(), 1u);
}

TEST_F(AuthorizerTest, StarInsideAnAlwaysAllowPathIsRejected) {
  options_.always_allow_paths = {"/a*b"};
  EXPECT_THROW(Authorizer rejected(api_, options_), std::invalid_argument);
}

TEST_F(AuthorizerTest, WithoutAnApiEverythingElseIsDenied) {
  Authorizer without_api(nullptr, options_);
  EXPECT_EQ(without_api.authorize(alice(), server::parseRequestInfo("GET", kC13)).outcome,
            AuthzOutcome::kDenied);
  EXPECT_EQ(without_api.authorize(alice(), server::parseRequestInfo("GET", "/readyz")).outcome,
            AuthzOutcome::kAllowed);
}

TEST_F(AuthorizerTest, InvalidUtf8IsSentAsReplacementCharacters) {
  UserInfo user = alice();
  user.extra["k\xFF"] = {"v\xC3"};

  EXPECT_EQ(authorize(user, "/apis/custom.metrics.k8s.io/v1beta1/nodes/%FF/m").outcome,
            AuthzOutcome::kAllowed);

  ASSERT_EQ(api_->posts.size(), 1u);
  EXPECT_EQ(api_->posts[0].body["spec"]["resourceAttributes"]["name"], "\xEF\xBF\xBD");
}

struct MessageCase {
  std::string label;
  UserInfo user;
  server::RequestInfo attributes;
  std::string reason;
  std::string expected;
};

server::RequestInfo attributesOf(const std::string& target) {
  return server::parseRequestInfo("GET", target);
}

// docs/api-contract.md "Status responses" and upstream's responsewriters.forbiddenMessage +
// apierrors.NewForbidden.
TEST(ForbiddenMessageTest, FormatsOfSection4_7) {
  const UserInfo bob{"bob", "", {}, {}};
  const std::vector<MessageCase> cases = {
      {"C51", alice(), attributesOf(kC13), "",
       "pods.custom.metrics.k8s.io \"*\" is forbidden: User \"alice\" cannot get resource "
       "\"pods/http_requests_per_second\" in API group \"custom.metrics.k8s.io\" in the namespace "
       "\"default\""},
      {"cluster scope", bob, attributesOf("/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/node_load"),
       "",
       "nodes.custom.metrics.k8s.io \"n1\" is forbidden: User \"bob\" cannot get resource "
       "\"nodes/node_load\" in API group \"custom.metrics.k8s.io\" at the cluster scope"},
      {"namespace metric", bob,
       attributesOf("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/metrics/queue_length"),
       "",
       "metrics.custom.metrics.k8s.io \"queue_length\" is forbidden: User \"bob\" cannot get "
       "resource \"metrics\" in API group \"custom.metrics.k8s.io\" in the namespace \"default\""},
      {"list without a name", bob,
       attributesOf(
           "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready"),
       "",
       "queue_messages_ready.external.metrics.k8s.io is forbidden: User \"bob\" cannot list "
       "resource \"queue_messages_ready\" in API group \"external.metrics.k8s.io\" in the "
       "namespace \"default\""},
      {"core group", bob, attributesOf("/api/v1/namespaces/default/pods"), "",
       "pods is forbidden: User \"bob\" cannot list resource \"pods\" in API group \"\" in the "
       "namespace \"default\""},
      {"non-resource", bob, attributesOf("/apis"), "",
       "forbidden: User \"bob\" cannot get path \"/apis\""},
      {"reason appended", bob, attributesOf("/apis/metrics.k8s.io/v1beta1/nodes"), "RBAC: no",
       "nodes.metrics.k8s.io is forbidden: User \"bob\" cannot list resource \"nodes\" in API "
       "group \"metrics.k8s.io\" at the cluster scope: RBAC: no"},
      {"Go quoting", UserInfo{"e\"ve\n", "", {}, {}},
       attributesOf("/apis/custom.metrics.k8s.io/v1beta1/nodes/a%5Cb%FF/m"), "",
       "nodes.custom.metrics.k8s.io \"a\\\\b\\xff\" is forbidden: User \"e\\\"ve\\n\" cannot get "
       "resource \"nodes/m\" in API group \"custom.metrics.k8s.io\" at the cluster scope"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(forbiddenMessage(c.user, c.attributes, c.reason), c.expected) << c.label;
  }
}

}  // namespace
}  // namespace metrics_adapter::auth
