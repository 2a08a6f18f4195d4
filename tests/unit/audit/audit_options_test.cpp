#include "metrics_adapter/audit/audit_options.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "unit/net/test_support.h"

namespace metrics_adapter::audit {
namespace {

using std::chrono::milliseconds;

const FlagDefinition& flagNamed(const std::string& name) {
  for (const FlagDefinition& flag : auditFlags()) {
    if (flag.name == name) return flag;
  }
  throw std::out_of_range(name);
}

std::string errorOf(const std::string& name, const std::string& value) {
  AuditOptions options;
  try {
    flagNamed(name).apply(options, value);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(AuditFlagsTest, TheThirtyOneUpstreamFlags) {
  const std::set<std::string> expected = {
      "audit-policy-file",
      "audit-log-path",
      "audit-log-maxage",
      "audit-log-maxbackup",
      "audit-log-maxsize",
      "audit-log-format",
      "audit-log-compress",
      "audit-log-version",
      "audit-log-mode",
      "audit-log-batch-buffer-size",
      "audit-log-batch-max-size",
      "audit-log-batch-max-wait",
      "audit-log-batch-throttle-enable",
      "audit-log-batch-throttle-qps",
      "audit-log-batch-throttle-burst",
      "audit-log-truncate-enabled",
      "audit-log-truncate-max-batch-size",
      "audit-log-truncate-max-event-size",
      "audit-webhook-config-file",
      "audit-webhook-initial-backoff",
      "audit-webhook-mode",
      "audit-webhook-batch-buffer-size",
      "audit-webhook-batch-max-size",
      "audit-webhook-batch-max-wait",
      "audit-webhook-batch-throttle-enable",
      "audit-webhook-batch-throttle-qps",
      "audit-webhook-batch-throttle-burst",
      "audit-webhook-truncate-enabled",
      "audit-webhook-truncate-max-batch-size",
      "audit-webhook-truncate-max-event-size",
      "audit-webhook-version",
  };
  std::set<std::string> names;
  for (const FlagDefinition& flag : auditFlags()) {
    names.insert(flag.name);
    EXPECT_FALSE(flag.help.empty()) << flag.name;
    EXPECT_EQ(flag.boolean,
              flag.name.find("enable") != std::string::npos || flag.name == "audit-log-compress")
        << flag.name;
  }
  EXPECT_EQ(auditFlags().size(), 31u);
  EXPECT_EQ(names, expected);
}

TEST(AuditFlagsTest, DefaultsAreUpstreams) {
  const AuditOptions o;
  EXPECT_EQ(o.log_batch.mode, AuditMode::kBlocking);
  EXPECT_EQ(o.log_batch.buffer_size, 10000u);
  EXPECT_EQ(o.log_batch.max_batch_size, 1u);
  EXPECT_FALSE(o.log_batch.throttle_enable);
  EXPECT_EQ(o.webhook_batch.mode, AuditMode::kBatch);
  EXPECT_EQ(o.webhook_batch.max_batch_size, 400u);
  EXPECT_EQ(o.webhook_batch.max_batch_wait, std::chrono::seconds(30));
  EXPECT_TRUE(o.webhook_batch.throttle_enable);
  EXPECT_EQ(o.webhook_batch.throttle_qps, 10);
  EXPECT_EQ(o.webhook_batch.throttle_burst, 15);
  EXPECT_EQ(o.webhook_initial_backoff, std::chrono::seconds(10));
  EXPECT_EQ(o.webhook_truncate.max_event_size, 102400);
  EXPECT_EQ(o.webhook_truncate.max_batch_size, 10485760);
}

TEST(AuditFlagsTest, EveryFlagTakesATypicalValue) {
  AuditOptions o;
  const std::map<std::string, std::string> values = {
      {"audit-policy-file", "/etc/audit/policy.yaml"},
      {"audit-log-path", "/var/log/audit.log"},
      {"audit-log-maxage", "7"},
      {"audit-log-maxbackup", "3"},
      {"audit-log-maxsize", "50"},
      {"audit-log-format", "legacy"},
      {"audit-log-compress", "true"},
      {"audit-log-version", "audit.k8s.io/v1"},
      {"audit-log-mode", "batch"},
      {"audit-log-batch-buffer-size", "500"},
      {"audit-log-batch-max-size", "20"},
      {"audit-log-batch-max-wait", "1m30s"},
      {"audit-log-batch-throttle-enable", "true"},
      {"audit-log-batch-throttle-qps", "2.5"},
      {"audit-log-batch-throttle-burst", "4"},
      {"audit-log-truncate-enabled", "true"},
      {"audit-log-truncate-max-batch-size", "2000000"},
      {"audit-log-truncate-max-event-size", "50000"},
      {"audit-webhook-config-file", "/etc/audit/webhook.kubeconfig"},
      {"audit-webhook-initial-backoff", "250ms"},
      {"audit-webhook-mode", "blocking-strict"},
      {"audit-webhook-batch-buffer-size", "600"},
      {"audit-webhook-batch-max-size", "30"},
      {"audit-webhook-batch-max-wait", "5s"},
      {"audit-webhook-batch-throttle-enable", "false"},
      {"audit-webhook-batch-throttle-qps", "7"},
      {"audit-webhook-batch-throttle-burst", "9"},
      {"audit-webhook-truncate-enabled", "1"},
      {"audit-webhook-truncate-max-batch-size", "3000000"},
      {"audit-webhook-truncate-max-event-size", "60000"},
      {"audit-webhook-version", "audit.k8s.io/v1"},
  };
  ASSERT_EQ(values.size(), auditFlags().size());
  for (const FlagDefinition& flag : auditFlags()) {
    ASSERT_EQ(values.count(flag.name), 1u) << flag.name;
    EXPECT_NO_THROW(flag.apply(o, values.at(flag.name))) << flag.name;
  }
  EXPECT_EQ(o.policy_file, "/etc/audit/policy.yaml");
  EXPECT_EQ(o.log_path, "/var/log/audit.log");
  EXPECT_EQ(o.log_max_age_days, 7);
  EXPECT_EQ(o.log_max_backups, 3);
  EXPECT_EQ(o.log_max_size_mb, 50);
  EXPECT_EQ(o.log_format, AuditLogFormat::kLegacy);
  EXPECT_TRUE(o.log_compress);
  EXPECT_EQ(o.log_batch.mode, AuditMode::kBatch);
  EXPECT_EQ(o.log_batch.buffer_size, 500u);
  EXPECT_EQ(o.log_batch.max_batch_size, 20u);
  EXPECT_EQ(o.log_batch.max_batch_wait, milliseconds(90000));
  EXPECT_TRUE(o.log_batch.throttle_enable);
  EXPECT_DOUBLE_EQ(o.log_batch.throttle_qps, 2.5);
  EXPECT_EQ(o.log_batch.throttle_burst, 4);
  EXPECT_TRUE(o.log_truncate.enabled);
  EXPECT_EQ(o.log_truncate.max_batch_size, 2000000);
  EXPECT_EQ(o.log_truncate.max_event_size, 50000);
  EXPECT_EQ(o.webhook_config_file, "/etc/audit/webhook.kubeconfig");
  EXPECT_EQ(o.webhook_initial_backoff, milliseconds(250));
  EXPECT_EQ(o.webhook_batch.mode, AuditMode::kBlockingStrict);
  EXPECT_EQ(o.webhook_batch.buffer_size, 600u);
  EXPECT_EQ(o.webhook_batch.max_batch_size, 30u);
  EXPECT_EQ(o.webhook_batch.max_batch_wait, milliseconds(5000));
  EXPECT_FALSE(o.webhook_batch.throttle_enable);
  EXPECT_DOUBLE_EQ(o.webhook_batch.throttle_qps, 7);
  EXPECT_EQ(o.webhook_batch.throttle_burst, 9);
  EXPECT_TRUE(o.webhook_truncate.enabled);
  EXPECT_EQ(o.webhook_truncate.max_batch_size, 3000000);
  EXPECT_EQ(o.webhook_truncate.max_event_size, 60000);
}

TEST(AuditFlagsTest, BadValuesNameTheFlag) {
  const std::map<std::string, std::string> bad = {
      {"audit-log-maxage", "-1"},
      {"audit-log-maxbackup", "three"},
      {"audit-log-maxsize", "1.5"},
      {"audit-log-format", "xml"},
      {"audit-log-compress", "yes"},
      {"audit-log-version", "audit.k8s.io/v1beta1"},
      {"audit-log-mode", "fast"},
      {"audit-log-batch-buffer-size", "0"},
      {"audit-log-batch-max-size", "0"},
      {"audit-log-batch-max-wait", "5"},
      {"audit-log-batch-throttle-enable", "on"},
      {"audit-log-batch-throttle-qps", "-1"},
      {"audit-log-batch-throttle-burst", "-2"},
      {"audit-log-truncate-enabled", "2"},
      {"audit-log-truncate-max-batch-size", "0"},
      {"audit-log-truncate-max-event-size", "big"},
      {"audit-webhook-initial-backoff", "0s"},
      {"audit-webhook-mode", "Batch"},
      {"audit-webhook-batch-buffer-size", "-5"},
      {"audit-webhook-batch-max-size", ""},
      {"audit-webhook-batch-max-wait", "-1s"},
      {"audit-webhook-batch-throttle-enable", ""},
      {"audit-webhook-batch-throttle-qps", "nan"},
      {"audit-webhook-batch-throttle-burst", "99999999999"},
      {"audit-webhook-truncate-enabled", "enabled"},
      {"audit-webhook-truncate-max-batch-size", "-1"},
      {"audit-webhook-truncate-max-event-size", "1e6"},
      {"audit-webhook-version", "v1"},
  };
  for (const auto& [name, value] : bad) {
    const std::string message = errorOf(name, value);
    EXPECT_EQ(message.rfind("--" + name + ": ", 0), 0u) << name << "=" << value << ": " << message;
  }
}

TEST(CheckAuditOptionsTest, NamesFlagAndFile) {
  net::testing::TempDir dir;
  struct Case {
    std::string name;
    AuditOptions options;
    std::vector<std::string> expected;  // substrings of the message
  };
  std::vector<Case> cases;
  AuditOptions bad_policy;
  bad_policy.policy_file =
      dir.write("p.yaml", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: All\n");
  cases.push_back(
      {"policy", bad_policy, {"--audit-policy-file: ", bad_policy.policy_file, "rules[0].level"}});
  AuditOptions unwritable;
  const std::string file = dir.write("plain", "x");
  unwritable.log_path = file + "/audit.log";
  cases.push_back({"log dir", unwritable, {"--audit-log-path: ", unwritable.log_path}});
  AuditOptions missing_kubeconfig;
  missing_kubeconfig.webhook_config_file = dir.file("missing.kubeconfig");
  cases.push_back({"kubeconfig",
                   missing_kubeconfig,
                   {"--audit-webhook-config-file: ", missing_kubeconfig.webhook_config_file}});
  AuditOptions throttle;
  throttle.log_path = dir.file("audit.log");
  throttle.log_batch.mode = AuditMode::kBatch;
  throttle.log_batch.throttle_enable = true;
  cases.push_back({"throttle", throttle, {"--audit-log-batch-throttle-qps: "}});
  AuditOptions truncate;
  truncate.log_path = "-";
  truncate.log_truncate.enabled = true;
  truncate.log_truncate.max_event_size = 2000;
  truncate.log_truncate.max_batch_size = 1000;
  cases.push_back({"truncate", truncate, {"--audit-log-truncate-max-event-size: "}});
  for (const Case& c : cases) {
    try {
      checkAuditOptions(c.options);
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      for (const std::string& part : c.expected) {
        EXPECT_NE(message.find(part), std::string::npos) << c.name << ": " << message;
      }
      EXPECT_EQ(message.rfind(c.expected[0], 0), 0u) << c.name << ": " << message;
    }
  }
  AuditOptions good;
  good.policy_file = dir.write("good.yaml", "apiVersion: audit.k8s.io/v1\nkind: Policy\n");
  good.log_path = dir.file("new/dir/audit.log");
  EXPECT_NO_THROW(checkAuditOptions(good));
  EXPECT_FALSE(std::filesystem::exists(dir.file("new")));  // checked, not created
}

}  // namespace
}  // namespace metrics_adapter::audit
