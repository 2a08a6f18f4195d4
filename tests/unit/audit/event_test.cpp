#include "audit/event.h"

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "audit/backend.h"
#include "metrics_adapter/audit/auditor.h"
#include "metrics_adapter/server/status.h"
#include "unit/audit/audit_test_support.h"

namespace metrics_adapter::audit {
namespace {

using nlohmann::json;
using testing::TestExchange;

// Keeps what it is given, serialised as the webhook does (JSON).
class CapturingSink : public EventSink {
 public:
  explicit CapturingSink(std::shared_ptr<std::vector<std::string>> lines)
      : lines_(std::move(lines)) {}
  void serialize(std::string& out, const Event& event, bool with_bodies) const override {
    appendEventJson(out, event, with_bodies);
  }
  bool deliver(const std::vector<std::string>& events) override {
    lines_->insert(lines_->end(), events.begin(), events.end());
    return true;
  }

 private:
  std::shared_ptr<std::vector<std::string>> lines_;
};

constexpr const char* kTarget =
    "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/web-0/"
    "gpu_util?metricLabelSelector=a%3Db";

class EventTest : public ::testing::Test {
 protected:
  // The events recorded for `exchange` under a policy with one rule of `level`.
  std::vector<json> record(const server::Exchange& exchange, Level level,
                           const std::string& omit = "[]") {
    const std::string policy_text = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: " +
                                    std::string(levelName(level)) + "\n  omitStages: " + omit +
                                    "\n";
    auto policy = std::make_shared<const Policy>(parsePolicy(policy_text, "p"));
    auto lines = std::make_shared<std::vector<std::string>>();
    std::vector<std::unique_ptr<Backend>> backends;
    backends.push_back(std::make_unique<Backend>("log", std::make_unique<CapturingSink>(lines),
                                                 BatchOptions{}, TruncateOptions{}, metrics_,
                                                 "write_error"));
    Auditor auditor(policy, std::move(backends));
    EXPECT_TRUE(auditor.record(exchange));
    std::vector<json> events;
    for (const std::string& line : *lines) {
      EXPECT_EQ(line.find('\n'), std::string::npos);
      events.push_back(json::parse(line));
    }
    return events;
  }

  std::shared_ptr<telemetry::SelfMetrics> metrics_ = std::make_shared<telemetry::SelfMetrics>();
};

TEST_F(EventTest, ServedRequestAtMetadata) {
  TestExchange t("GET", kTarget, 200, R"({"kind":"MetricValueList","items":[]})");
  t.as("system:serviceaccount:kube-system:hpa", {"system:serviceaccounts", "system:authenticated"})
      .decided("allow");
  t.notes.uid = "1234";
  t.notes.extra = {{"scopes", {"a", "b"}}};
  const std::vector<json> events = record(t.exchange, Level::kMetadata);
  ASSERT_EQ(events.size(), 2u);
  const json& received = events[0];
  const json& complete = events[1];
  EXPECT_EQ(received["stage"], "RequestReceived");
  EXPECT_EQ(complete["stage"], "ResponseComplete");
  EXPECT_EQ(received["auditID"], complete["auditID"]);
  EXPECT_TRUE(std::regex_match(complete["auditID"].get<std::string>(),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                                          "[0-9a-f]{12}")));
  EXPECT_EQ(complete["kind"], "Event");
  EXPECT_EQ(complete["apiVersion"], "audit.k8s.io/v1");
  EXPECT_EQ(complete["level"], "Metadata");
  EXPECT_EQ(complete["requestURI"], kTarget);
  EXPECT_EQ(complete["verb"], "get");
  EXPECT_EQ(complete["user"], json::parse(R"({"username":"system:serviceaccount:kube-system:hpa",
      "uid":"1234","groups":["system:serviceaccounts","system:authenticated"],
      "extra":{"scopes":["a","b"]}})"));
  EXPECT_EQ(complete["sourceIPs"], json::array({"10.1.2.3"}));
  EXPECT_EQ(complete["userAgent"], t.exchange.user_agent);
  EXPECT_EQ(complete["objectRef"],
            json::parse(R"({"resource":"pods","namespace":"default","name":"web-0",
                "apiGroup":"custom.metrics.k8s.io","apiVersion":"v1beta2",
                "subresource":"gpu_util"})"));
  EXPECT_EQ(complete["responseStatus"], json::parse(R"({"metadata":{},"code":200})"));
  EXPECT_FALSE(complete.contains("responseObject"));
  EXPECT_FALSE(received.contains("responseStatus"));
  // The reason is there beside the decision, empty when the authorizer gave none (as upstream).
  EXPECT_EQ(complete["annotations"], json::parse(R"({"authorization.k8s.io/decision":"allow",
      "authorization.k8s.io/reason":""})"));
  // Timestamps: received = answered - latency; RequestReceived's stage time is the receipt.
  EXPECT_EQ(received["stageTimestamp"], received["requestReceivedTimestamp"]);
  EXPECT_EQ(received["requestReceivedTimestamp"], complete["requestReceivedTimestamp"]);
  const std::string stamp = complete["stageTimestamp"];
  EXPECT_TRUE(std::regex_match(stamp, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)")));
  const auto micros = [](const std::string& text) {
    return std::stoll(text.substr(17, 2)) * 1000000 + std::stoll(text.substr(20, 6));
  };
  const long long difference =
      (micros(stamp) - micros(complete["requestReceivedTimestamp"]) + 60000000) % 60000000;
  EXPECT_EQ(difference, t.exchange.latency.count());
}

TEST_F(EventTest, RefusedRequests) {
  struct Case {
    std::string name;
    int code;
    std::string reason;
    std::string message;
    std::string user;
    std::string_view decision;
    std::string decision_reason;
  };
  const std::vector<Case> cases = {
      {"503 when the access review failed", 503, "ServiceUnavailable",
       "authorization is temporarily unavailable", "bob", "", "internal error"},
      {"403 forbidden", 403, "Forbidden",
       "pods.custom.metrics.k8s.io \"web-0\" is forbidden: User \"bob\" cannot get", "bob",
       "forbid", "no RBAC policy matched"},
      {"429 from the server itself", 429, "TooManyRequests", "too many requests in flight", "", "",
       ""},
  };
  for (const Case& c : cases) {
    const std::string body = server::statusJson(c.code, c.reason, c.message);
    for (const Level level : {Level::kMetadata, Level::kRequest, Level::kRequestResponse}) {
      TestExchange t("GET", kTarget, c.code, body);
      t.as(c.user, c.user.empty() ? std::vector<std::string>{}
                                  : std::vector<std::string>{"system:authenticated"})
          .decided(c.decision, c.decision_reason);
      const std::vector<json> events = record(t.exchange, level, "[RequestReceived]");
      ASSERT_EQ(events.size(), 1u) << c.name;
      const json& event = events[0];
      EXPECT_EQ(event["level"], levelName(level)) << c.name;
      EXPECT_EQ(event["user"].value("username", "<absent>"), c.user.empty() ? "<absent>" : c.user)
          << c.name;
      EXPECT_EQ(event["responseStatus"], json({{"metadata", json::object()},
                                               {"status", "Failure"},
                                               {"message", c.message},
                                               {"reason", c.reason},
                                               {"code", c.code}}))
          << c.name;
      if (c.decision.empty() && c.decision_reason.empty()) {
        EXPECT_FALSE(event.contains("annotations")) << c.name;
      } else {
        EXPECT_EQ(event["annotations"].contains("authorization.k8s.io/decision"),
                  !c.decision.empty())
            << c.name;
        if (!c.decision.empty()) {
          EXPECT_EQ(event["annotations"]["authorization.k8s.io/decision"], c.decision);
        }
        EXPECT_EQ(event["annotations"]["authorization.k8s.io/reason"], c.decision_reason);
      }
      EXPECT_FALSE(event.contains("requestObject")) << c.name;
      EXPECT_EQ(event.contains("responseObject"), level == Level::kRequestResponse) << c.name;
    }
  }
}

TEST_F(EventTest, TheRequestsAuditIdIsTheEventsId) {
  TestExchange t("GET", kTarget, 200);
  t.exchange.audit_id = "5b0c2f1e-aggregator-id";  // the server's choice: the header or a UUID
  for (const json& event : record(t.exchange, Level::kMetadata)) {
    EXPECT_EQ(event["auditID"], "5b0c2f1e-aggregator-id");
  }
  // An exchange without one (a request that could not be read) gets a fresh one per answer.
  TestExchange unread("", "", 431);
  const std::vector<json> first = record(unread.exchange, Level::kMetadata);
  const std::vector<json> second = record(unread.exchange, Level::kMetadata);
  EXPECT_EQ(first[0]["auditID"], first[1]["auditID"]);
  EXPECT_NE(first[0]["auditID"], second[0]["auditID"]);
  EXPECT_EQ(first[0]["auditID"].get<std::string>().size(), 36u);
}

TEST_F(EventTest, SourceIpsFollowTheProxyHeaders) {
  TestExchange t("GET", kTarget, 200);
  t.exchange.forwarded_for = "192.168.0.7, 10.9.9.9";
  t.exchange.real_ip = "10.9.9.9";
  for (const json& event : record(t.exchange, Level::kMetadata)) {
    EXPECT_EQ(event["sourceIPs"], json::array({"192.168.0.7", "10.9.9.9", "10.1.2.3"}));
  }
}

TEST_F(EventTest, AFailedAuthenticationIsRecordedOnceAtResponseStarted) {
  const std::string body = server::statusJson(401, "Unauthorized", "Unauthorized");
  for (const Level level : {Level::kMetadata, Level::kRequest, Level::kRequestResponse}) {
    TestExchange t("GET", kTarget, 401, body);
    t.notes.failed_authentication = "Authentication failed, attempted: bearer";
    const std::vector<json> events = record(t.exchange, level);
    ASSERT_EQ(events.size(), 1u);
    const json& event = events[0];
    EXPECT_EQ(event["stage"], "ResponseStarted");
    // Upstream's handler writes a Status of its own: the message and the code, nothing else.
    EXPECT_EQ(event["responseStatus"],
              json::parse(R"({"metadata":{},"message":"Authentication failed, attempted: bearer",
                  "code":401})"));
    EXPECT_EQ(event["user"], json::object());  // upstream's UserInfo omits empty fields
    EXPECT_FALSE(event.contains("annotations"));
    EXPECT_NE(event["stageTimestamp"], event["requestReceivedTimestamp"]);
    EXPECT_EQ(event["objectRef"]["resource"], "pods");
    // Omitting the other stages changes nothing; omitting ResponseStarted leaves nothing.
    EXPECT_EQ(record(t.exchange, level, "[RequestReceived, ResponseComplete]").size(), 1u);
    EXPECT_TRUE(record(t.exchange, level, "[ResponseStarted]").empty());
  }
}

TEST_F(EventTest, RequestResponseCarriesTheResponseObjectOfResourceRequests) {
  const json body = json::parse(R"({"kind":"MetricValueList","apiVersion":
      "custom.metrics.k8s.io/v1beta2","metadata":{},"items":[{"value":"42"}]})");
  const std::string compact = body.dump();
  const std::string pretty = body.dump(2);
  for (const std::string& text : {compact, pretty}) {
    TestExchange t("GET", kTarget, 200, text);
    const std::vector<json> events = record(t.exchange, Level::kRequestResponse);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_FALSE(events[0].contains("responseObject"));
    EXPECT_EQ(events[1]["responseObject"], body);
  }
  // Request level: no bodies at all.
  TestExchange request_level("GET", kTarget, 200, compact);
  EXPECT_FALSE(record(request_level.exchange, Level::kRequest)[1].contains("responseObject"));
  // Non-resource requests and non-JSON bodies: none.
  TestExchange discovery("GET", "/apis/custom.metrics.k8s.io/v1beta2", 200, compact);
  const json discovery_event = record(discovery.exchange, Level::kRequestResponse)[1];
  EXPECT_FALSE(discovery_event.contains("responseObject"));
  EXPECT_FALSE(discovery_event.contains("objectRef"));
  TestExchange text("GET", kTarget, 200, "not json");
  EXPECT_FALSE(record(text.exchange, Level::kRequestResponse)[1].contains("responseObject"));
}

TEST_F(EventTest, UnreadableTargetsAreNonResourceRequests) {
  TestExchange bad("POST", "/apis//x?y", 400);
  const json event = record(bad.exchange, Level::kMetadata)[1];
  EXPECT_EQ(event["verb"], "post");
  EXPECT_EQ(event["requestURI"], "/apis//x?y");
  EXPECT_FALSE(event.contains("objectRef"));
  TestExchange unread("", "", 431);
  unread.exchange.remote = "[fd00::1]:443";
  unread.exchange.user_agent = "";
  const json unread_event = record(unread.exchange, Level::kMetadata)[1];
  EXPECT_EQ(unread_event["verb"], "");
  EXPECT_EQ(unread_event["sourceIPs"], json::array({"fd00::1"}));
  EXPECT_FALSE(unread_event.contains("userAgent"));
  EXPECT_EQ(unread_event["responseStatus"]["code"], 431);
}

TEST_F(EventTest, NoneLevelAndOmittedStagesRecordNothing) {
  TestExchange t("GET", kTarget, 200);
  EXPECT_TRUE(record(t.exchange, Level::kNone).empty());
  EXPECT_TRUE(record(t.exchange, Level::kMetadata, "[RequestReceived, ResponseComplete]").empty());
}

TEST(LegacyLineTest, MatchesUpstreamsFormat) {
  Event event;
  event.audit_id = "a1b2";
  event.stage = Stage::kResponseComplete;
  const std::vector<std::string> ips = {"10.0.0.1", "10.0.0.2"};  // the first is written
  event.source_ips = ips;
  event.verb = "get";
  event.user = "bob";
  const std::vector<std::string> groups = {"g1", "g\"2"};
  event.groups = groups;
  event.user_agent = "kubectl";
  event.namespace_name = "default";
  event.request_uri = "/apis/x";
  event.code = 403;
  event.received = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000) +
                                                         std::chrono::microseconds(120000));
  EXPECT_EQ(legacyEventLine(event),
            R"(2023-11-14T22:13:20.12Z AUDIT: id="a1b2" stage="ResponseComplete" ip="10.0.0.1" )"
            R"(method="get" user="bob" groups="\"g1\",\"g\\\"2\"" as="<self>" )"
            R"(asgroups="<lookup>" user-agent="kubectl" namespace="default" uri="/apis/x" )"
            R"(response="403")");
  event.user = "";
  event.code = 0;
  event.source_ips = {};
  event.namespace_name = "";
  const std::string line = legacyEventLine(event);
  EXPECT_NE(line.find(R"(ip="<unknown>")"), std::string::npos);
  EXPECT_NE(line.find(R"(user="<none>" groups="<none>")"), std::string::npos);
  EXPECT_NE(line.find(R"(namespace="<none>")"), std::string::npos);
  EXPECT_NE(line.find(R"(response="<deferred>")"), std::string::npos);
}

TEST(MicroTimeTest, IsRfc3339InUtcWithMicroseconds) {
  using namespace std::chrono;
  const auto at =
      sys_days{year{2024} / 5 / 1} + hours(10) + minutes(2) + seconds(3) + microseconds(4005);
  EXPECT_EQ(microTime(at), "2024-05-01T10:02:03.004005Z");
  EXPECT_EQ(microTime(sys_days{year{1999} / 12 / 31} + hours(23) + minutes(59) + seconds(59) +
                      microseconds(999999)),
            "1999-12-31T23:59:59.999999Z");
}

}  // namespace
}  // namespace metrics_adapter::audit
