#include "metrics_adapter/api/request_pipeline.h"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "metrics_adapter/auth/auth_filter.h"
#include "unit/api/empty_router.h"

namespace metrics_adapter::api {
namespace {

using metrics_adapter::testing::emptyRouter;

server::HttpRequest get(const std::string& target) {
  server::HttpRequest request;
  request.method = "GET";
  request.target = target;
  return request;
}

// The count of metrics_adapter_requests_total{route,code} in `metrics`' exposition, or 0.
double requestCount(const telemetry::SelfMetrics& metrics, const std::string& route, int code) {
  const std::string prefix = "metrics_adapter_requests_total{";
  const std::string exposition = metrics.exposition();
  std::size_t at = 0;
  while ((at = exposition.find(prefix, at)) != std::string::npos) {
    const std::size_t end = exposition.find('\n', at);
    const std::string line = exposition.substr(at, end - at);
    at = end;
    if (line.find("route=\"" + route + "\"") != std::string::npos &&
        line.find("code=\"" + std::to_string(code) + "\"") != std::string::npos) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return 0;
}

class RequestPipelineTest : public ::testing::Test {
 protected:
  std::shared_ptr<telemetry::SelfMetrics> metrics_ = std::make_shared<telemetry::SelfMetrics>();
  RequestPipeline pipeline_{nullptr, emptyRouter(), metrics_};
};

TEST_F(RequestPipelineTest, AnAmbiguousTargetIsABadRequestLabelledOther) {
  const auto response = pipeline_.handle(get("/apis/custom.metrics.k8s.io/v1beta1/nodes/n1//m"));
  EXPECT_EQ(response.status, 400);
  const auto body = Json::parse(response.body);
  EXPECT_EQ(body["reason"], "BadRequest");
  EXPECT_EQ(body["message"], "invalid request path: empty segment");
  EXPECT_EQ(response.notes.route, "other");
}

TEST_F(RequestPipelineTest, NotesCarryTheRouteTemplate) {
  struct Case {
    std::string target;
    std::string route;
    int code;
  };
  for (const Case& c : std::vector<Case>{
           {"/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/m", "custom_metric", 404},
           {"/apis/external.metrics.k8s.io/v1beta1/namespaces/a/m", "external_metric", 404},
           {"/apis/custom.metrics.k8s.io/v1beta1", "discovery", 200},
           {"/healthz", "health", 200},
           {"/no/such/path", "other", 404},
       }) {
    const auto response = pipeline_.handle(get(c.target));
    EXPECT_EQ(response.status, c.code) << c.target;
    EXPECT_EQ(response.notes.route, c.route) << c.target;
  }
}

TEST_F(RequestPipelineTest, TheInFlightGaugeIsBackToZero) {
  pipeline_.handle(get("/apis"));
  EXPECT_NE(metrics_->exposition().find("metrics_adapter_requests_in_flight 0\n"),
            std::string::npos);
}

TEST_F(RequestPipelineTest, DiscoveryIsAnsweredAtOnceAndMetricsAreNot) {
  for (const std::string target :
       {"/apis", "/apis/custom.metrics.k8s.io", "/apis/custom.metrics.k8s.io/v1beta1",
        "/apis/external.metrics.k8s.io/v1beta1", "/version"}) {
    const auto at_once = pipeline_.answerAtOnce(get(target));
    ASSERT_TRUE(at_once) << target;
    const auto handled = pipeline_.handle(get(target));
    EXPECT_EQ(at_once->status, 200) << target;
    EXPECT_EQ(at_once->bodyText(), handled.bodyText()) << target;
    EXPECT_EQ(at_once->notes.route, "discovery") << target;
  }
  // Metrics wait on Prometheus; health runs its checks; a bad target is answered after
  // authentication: all on a worker.
  for (const std::string target :
       {"/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/m",
        "/apis/external.metrics.k8s.io/v1beta1/namespaces/a/m", "/healthz", "/metrics",
        "/apis/custom.metrics.k8s.io/v1beta1//"}) {
    EXPECT_FALSE(pipeline_.answerAtOnce(get(target))) << target;
  }
}

// Answers TokenReviews (the token "good" is alice, "other" mallory, "late" eve) and
// SubjectAccessReviews (alice may, eve's fail, anyone else may not), each with a reason; counts
// the calls.
constexpr const char* kAllowReason = R"(RBAC: allowed by ClusterRoleBinding "hpa" to User "alice")";
constexpr const char* kDenyReason = "no RBAC policy matched";

class ReviewingKubeApi : public kube::KubeApi {
 public:
  nlohmann::json get(const std::string& path, std::string_view,
                     std::chrono::milliseconds) override {
    throw kube::KubeError(404, "unexpected GET " + path);
  }
  nlohmann::json post(const std::string& path, const nlohmann::json& body,
                      std::chrono::milliseconds) override {
    std::lock_guard lock(mutex_);
    ++calls_;
    if (path.find("tokenreviews") != std::string::npos) {
      const bool good = body["spec"]["token"] == "good";
      const bool other = body["spec"]["token"] == "other";
      const bool late = body["spec"]["token"] == "late";
      nlohmann::json status = {{"authenticated", good || other || late}};
      if (good) status["user"] = {{"username", "alice"}, {"groups", {"devs"}}};
      if (other) status["user"] = {{"username", "mallory"}, {"uid", "u-9"}, {"groups", {"ops"}}};
      if (late) status["user"] = {{"username", "eve"}};
      return {{"kind", "TokenReview"}, {"status", status}};
    }
    if (body["spec"]["user"] == "eve") throw kube::KubeError(500, "etcd is away");
    const bool allowed = body["spec"]["user"] == "alice";
    return {{"kind", "SubjectAccessReview"},
            {"status", {{"allowed", allowed}, {"reason", allowed ? kAllowReason : kDenyReason}}}};
  }
  int calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  mutable std::mutex mutex_;
  int calls_ = 0;
};

// A pipeline whose authentication and authorization ask `api`.
RequestPipeline delegatedPipeline(const std::shared_ptr<ReviewingKubeApi>& api) {
  auto filter = std::make_shared<const auth::AuthFilter>(
      std::make_shared<auth::Authenticator>(api, auth::AuthenticatorOptions{},
                                            auth::AuthenticationConfig{}),
      std::make_shared<auth::Authorizer>(api, auth::AuthorizerOptions{}));
  return RequestPipeline(filter, emptyRouter(), std::make_shared<telemetry::SelfMetrics>());
}

// A discovery request with a bearer token.
server::HttpRequest as(const std::string& token) {
  server::HttpRequest request = get("/apis/custom.metrics.k8s.io/v1beta1");
  request.headers = {{"Authorization", "Bearer " + token}};
  return request;
}

TEST(RequestPipelineAtOnceTest, DelegatedAuthAnswersAtOnceOnlyFromItsCaches) {
  auto api = std::make_shared<ReviewingKubeApi>();
  const RequestPipeline pipeline = delegatedPipeline(api);

  EXPECT_FALSE(pipeline.answerAtOnce(as("good")));  // the token's review is not cached yet
  EXPECT_EQ(api->calls(), 0);
  EXPECT_EQ(pipeline.handle(as("good")).status, 200);  // TokenReview + SubjectAccessReview
  EXPECT_EQ(api->calls(), 2);
  const auto cached = pipeline.answerAtOnce(as("good"));
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->status, 200);
  EXPECT_EQ(cached->notes.user, "alice");
  EXPECT_EQ(api->calls(), 2);

  // Refusals come from the caches too, with the same answers as on a worker.
  EXPECT_EQ(pipeline.handle(as("bad")).status, 401);
  EXPECT_EQ(pipeline.answerAtOnce(as("bad"))->status, 401);
  EXPECT_EQ(api->calls(), 3);
}

TEST(RequestPipelineAuditNotesTest, NotesCarryTheCallerAndTheAuthorizationDecision) {
  auto api = std::make_shared<ReviewingKubeApi>();
  const RequestPipeline pipeline = delegatedPipeline(api);

  const auto allowed = pipeline.handle(as("good"));
  EXPECT_EQ(allowed.status, 200);
  EXPECT_EQ(allowed.notes.user, "alice");
  // The authenticator adds system:authenticated, as the Kubernetes API server does.
  EXPECT_EQ(allowed.notes.groups, (std::vector<std::string>{"devs", "system:authenticated"}));
  EXPECT_EQ(allowed.notes.decision, "allow");
  EXPECT_EQ(allowed.notes.decision_reason, kAllowReason);
  EXPECT_EQ(allowed.notes.failed_authentication, "");

  const auto denied = pipeline.handle(as("other"));
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.notes.user, "mallory");
  EXPECT_EQ(denied.notes.uid, "u-9");
  EXPECT_EQ(denied.notes.groups, (std::vector<std::string>{"ops", "system:authenticated"}));
  EXPECT_EQ(denied.notes.decision, "forbid");
  EXPECT_EQ(denied.notes.decision_reason, kDenyReason);
  // The cached denial carries its reason as the first answer did.
  const auto denied_again = pipeline.answerAtOnce(as("other"));
  ASSERT_TRUE(denied_again);
  EXPECT_EQ(denied_again->notes.decision_reason, kDenyReason);

  // A review that failed decided nothing: upstream's "internal error" reason, no decision.
  const auto undecided = pipeline.handle(as("late"));
  EXPECT_EQ(undecided.status, 503);
  EXPECT_EQ(undecided.notes.decision, "");
  EXPECT_EQ(undecided.notes.decision_reason, "internal error");

  const auto refused = pipeline.handle(as("bad"));  // never reached authorization
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.notes.decision, "");
  EXPECT_EQ(refused.notes.decision_reason, "");
  EXPECT_TRUE(refused.notes.groups.empty());
  // What the audit log says of it, as upstream: which credentials were tried.
  EXPECT_EQ(refused.notes.failed_authentication, "Authentication failed, attempted: bearer");
  EXPECT_EQ(pipeline.answerAtOnce(as("bad"))->notes.failed_authentication,
            "Authentication failed, attempted: bearer");

  // Without authentication every request is allowed, by no one in particular.
  RequestPipeline open(nullptr, emptyRouter(), std::make_shared<telemetry::SelfMetrics>());
  const auto open_answer = open.handle(get("/apis"));
  EXPECT_EQ(open_answer.notes.decision, "allow");
  EXPECT_EQ(open_answer.notes.decision_reason, "");
}

TEST(RequestAccountingTest, AnAuditThatCannotWriteRefusesTheAnswer) {
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  int audited = 0;
  RequestAccounting accounting(metrics, nullptr, [&](const server::Exchange& exchange) {
    ++audited;
    return exchange.code != 200;  // this "backend" fails on 200s
  });
  const server::ResponseNotes none;
  EXPECT_FALSE(
      accounting.observe({.method = "GET", .target = "/apis", .code = 200, .notes = &none}));
  EXPECT_TRUE(
      accounting.observe({.method = "GET", .target = "/apis", .code = 500, .notes = &none}));
  EXPECT_EQ(audited, 2);
  RequestAccounting unaudited(metrics, nullptr);
  EXPECT_TRUE(unaudited.observe({.method = "GET", .target = "/apis", .code = 200, .notes = &none}));
}

TEST(RequestAccountingTest, CountsAndLogsAnswersTheServerGaveItself) {
  auto metrics = std::make_shared<telemetry::SelfMetrics>();
  std::vector<std::string> logged;
  RequestAccounting accounting(metrics, [&](const server::Exchange& exchange) {
    logged.push_back(std::to_string(exchange.code) + " " + std::string(exchange.target));
  });
  const server::ResponseNotes none;
  const server::ResponseNotes routed{.user = "alice", .route = "discovery", .backend_time = {}};
  accounting.observe({.method = "GET",
                      .target = "/apis/custom.metrics.k8s.io/v1beta1/nodes/n/m",
                      .remote = "",
                      .code = 429,
                      .latency = {},
                      .notes = &none});
  accounting.observe(
      {.method = "", .target = "", .remote = "", .code = 431, .latency = {}, .notes = &none});
  accounting.observe({.method = "GET",
                      .target = "/apis",
                      .remote = "",
                      .code = 401,
                      .latency = {},
                      .notes = &routed});
  EXPECT_EQ(requestCount(*metrics, "custom_metric", 429), 1);
  EXPECT_EQ(requestCount(*metrics, "other", 431), 1);
  EXPECT_EQ(requestCount(*metrics, "discovery", 401), 1);
  EXPECT_EQ(logged, (std::vector<std::string>{"429 /apis/custom.metrics.k8s.io/v1beta1/nodes/n/m",
                                              "431 ", "401 /apis"}));
}

}  // namespace
}  // namespace metrics_adapter::api
