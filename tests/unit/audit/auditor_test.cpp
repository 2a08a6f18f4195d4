#include "metrics_adapter/audit/auditor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "metrics_adapter/server/status.h"
#include "unit/audit/audit_test_support.h"
#include "unit/net/fake_http_server.h"
#include "unit/net/test_certificates.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::audit {
namespace {

using net::testing::FakeHttpServer;
using net::testing::RecordedRequest;
using net::testing::Reply;
using net::testing::TempDir;
using nlohmann::json;
using testing::sample;
using testing::TestExchange;

constexpr const char* kMetadataPolicy =
    "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
    "- level: None\n  nonResourceURLs: [/healthz]\n- level: Metadata\n";

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string kubeconfig(const std::string& server, const std::string& ca_file) {
  return "apiVersion: v1\nkind: Config\nclusters:\n- name: audit\n  cluster:\n    server: " +
         server + "\n    certificate-authority: " + ca_file +
         "\nusers:\n- name: audit\n  user:\n    token: audit-token\ncontexts:\n- name: audit\n"
         "  context:\n    cluster: audit\n    user: audit\ncurrent-context: audit\n";
}

class AuditorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new net::testing::TestPki(net::testing::makeTestPki()); }
  static void TearDownTestSuite() { delete pki_; }

  AuditOptions webhookOptions(const FakeHttpServer& server) {
    AuditOptions options;
    options.policy_file = dir_.write("policy.yaml", kMetadataPolicy);
    dir_.write("ca.pem", pki_->ca_cert);
    options.webhook_config_file =
        dir_.write("webhook.kubeconfig", kubeconfig(server.url() + "/audit/events", "ca.pem"));
    options.webhook_initial_backoff = std::chrono::milliseconds(10);
    return options;
  }
  static net::testing::ServerTls tls() { return {pki_->server_cert, pki_->server_key, ""}; }

  static net::testing::TestPki* pki_;
  TempDir dir_;
  std::shared_ptr<telemetry::SelfMetrics> metrics_ = std::make_shared<telemetry::SelfMetrics>();
};

net::testing::TestPki* AuditorTest::pki_ = nullptr;

TEST_F(AuditorTest, OffWithoutPolicyOrBackend) {
  AuditOptions options;
  EXPECT_EQ(Auditor::start(options, metrics_), nullptr);
  options.log_path = dir_.file("audit.log");
  EXPECT_EQ(Auditor::start(options, metrics_), nullptr);  // a backend without a policy: warned
  options.log_path.clear();
  options.policy_file = dir_.write("policy.yaml", kMetadataPolicy);
  EXPECT_EQ(Auditor::start(options, metrics_), nullptr);
}

TEST_F(AuditorTest, LogBackendWritesOneJsonLinePerEvent) {
  AuditOptions options;
  options.policy_file = dir_.write("policy.yaml", kMetadataPolicy);
  options.log_path = dir_.file("logs/audit.log");
  auto auditor = Auditor::start(options, metrics_);
  ASSERT_NE(auditor, nullptr);
  TestExchange served("GET", "/apis/custom.metrics.k8s.io/v1beta2", 200);
  TestExchange health("GET", "/healthz", 200);
  EXPECT_TRUE(auditor->record(served.exchange));
  EXPECT_TRUE(auditor->record(health.exchange));  // level None
  auditor->stop();
  auditor->stop();  // idempotent
  const std::vector<json> events = testing::jsonLines(readFile(options.log_path));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["requestURI"], "/apis/custom.metrics.k8s.io/v1beta2");
  EXPECT_EQ(sample(*metrics_, R"(metrics_adapter_audit_events_total{backend="log"})"), 1);
}

TEST_F(AuditorTest, LegacyFormatInBatchMode) {
  AuditOptions options;
  options.policy_file = dir_.write("policy.yaml", kMetadataPolicy);
  options.log_path = dir_.file("audit.log");
  options.log_format = AuditLogFormat::kLegacy;
  options.log_batch.mode = AuditMode::kBatch;
  auto auditor = Auditor::start(options, metrics_);
  ASSERT_NE(auditor, nullptr);
  TestExchange t("GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns1/pods/*/m", 200);
  t.as("bob", {"team"});
  EXPECT_TRUE(auditor->record(t.exchange));
  auditor->stop();
  const std::string text = readFile(options.log_path);
  EXPECT_NE(text.find(R"(AUDIT: id=")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(stage="ResponseComplete" ip="10.1.2.3" method="get" user="bob")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(namespace="ns1")"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST_F(AuditorTest, WebhookReceivesEventListBatches) {
  FakeHttpServer server([](const RecordedRequest&) { return Reply{}; }, tls());  // 200, empty
  AuditOptions options = webhookOptions(server);
  options.webhook_batch.max_batch_size = 2;
  options.webhook_batch.max_batch_wait = std::chrono::milliseconds(20);
  auto auditor = Auditor::start(options, metrics_);
  ASSERT_NE(auditor, nullptr);
  std::vector<std::string> sent;
  std::vector<std::unique_ptr<TestExchange>> exchanges;
  for (int i = 0; i < 5; ++i) {
    sent.push_back("/apis/custom.metrics.k8s.io/v1beta2/namespaces/n/pods/p" + std::to_string(i) +
                   "/m");
    exchanges.push_back(std::make_unique<TestExchange>("GET", sent.back(), 200));
    EXPECT_TRUE(auditor->record(exchanges.back()->exchange));
  }
  auditor->stop();
  std::vector<std::string> received;
  for (const RecordedRequest& request : server.requests()) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.path(), "/audit/events");
    EXPECT_EQ(request.header("content-type"), "application/json");
    EXPECT_EQ(request.header("authorization"), "Bearer audit-token");
    const json list = json::parse(request.body);
    EXPECT_EQ(list["kind"], "EventList");
    EXPECT_EQ(list["apiVersion"], "audit.k8s.io/v1");
    EXPECT_LE(list["items"].size(), 2u);
    for (const json& item : list["items"]) received.push_back(item["requestURI"]);
  }
  EXPECT_EQ(received, sent);
  EXPECT_EQ(sample(*metrics_, R"(metrics_adapter_audit_events_total{backend="webhook"})"), 5);
}

TEST_F(AuditorTest, FailingWebhookIsRetriedThenCountedAsSendError) {
  FakeHttpServer server(
      net::testing::answering(net::testing::jsonReply(server::statusJson(503, "x", "down"), 503)),
      tls());
  AuditOptions options = webhookOptions(server);
  options.webhook_batch.mode = AuditMode::kBlockingStrict;
  auto auditor = Auditor::start(options, metrics_);
  ASSERT_NE(auditor, nullptr);
  TestExchange t("GET", "/apis/custom.metrics.k8s.io/v1beta2", 200);
  EXPECT_FALSE(auditor->record(t.exchange));  // blocking-strict: the answer becomes a 500
  EXPECT_EQ(server.requests().size(), 5u);    // upstream's 5 steps of backoff
  EXPECT_EQ(
      sample(
          *metrics_,
          R"(metrics_adapter_audit_events_dropped_total{backend="webhook",reason="send_error"})"),
      1);
}

TEST_F(AuditorTest, ClientErrorsAreNotRetried) {
  FakeHttpServer server(net::testing::answering(net::testing::jsonReply("{}", 400)), tls());
  AuditOptions options = webhookOptions(server);
  options.webhook_batch.mode = AuditMode::kBlocking;
  auto auditor = Auditor::start(options, metrics_);
  TestExchange t("GET", "/apis/custom.metrics.k8s.io/v1beta2", 200);
  EXPECT_TRUE(auditor->record(t.exchange));  // blocking: the answer goes out anyway
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(AuditorTest, StopDoesNotWaitOutTheBackoff) {
  FakeHttpServer server(net::testing::answering(net::testing::jsonReply("{}", 500)), tls());
  AuditOptions options = webhookOptions(server);
  options.webhook_initial_backoff = std::chrono::seconds(60);
  options.webhook_batch.max_batch_wait = std::chrono::milliseconds(0);
  auto auditor = Auditor::start(options, metrics_);
  TestExchange t("GET", "/apis/custom.metrics.k8s.io/v1beta2", 200);
  EXPECT_TRUE(auditor->record(t.exchange));
  while (server.requests().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto started = std::chrono::steady_clock::now();
  auditor->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(
      sample(
          *metrics_,
          R"(metrics_adapter_audit_events_dropped_total{backend="webhook",reason="send_error"})"),
      1);
}

}  // namespace
}  // namespace metrics_adapter::audit
