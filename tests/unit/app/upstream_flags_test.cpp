// Every flag upstream's binary lists in --help (prometheus-adapter v0.12.0: its own flags, the
// custom-metrics-apiserver base's, the generic API server's secure serving, delegated
// authentication and authorization, audit and feature flags, and klog's), plus the three newer
// releases added: each is accepted with a typical value, listed by --help, and a bad value gets
// a message naming the flag. The names were taken from upstream's usage text; the values are
// typical ones from manifests.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "metrics_adapter/app/flags.h"
#include "unit/app/credential_files.h"
#include "unit/net/scoped_env.h"

namespace metrics_adapter::app {
namespace {

struct UpstreamFlag {
  const char* name;
  const char* typical;
  const char* bad;  // nullptr: any text is a valid value (a path, a name list)
};

// Placeholders replaced by real files: the two flags that read theirs while parsing.
constexpr const char* kKubeconfig = "@kubeconfig";

const std::vector<UpstreamFlag>& upstreamFlags() {
  static const std::vector<UpstreamFlag> kFlags = {
      // prometheus-adapter's own
      {"config", "/etc/adapter/config.yaml", nullptr},
      {"prometheus-url", "http://prometheus.default.svc:9090", nullptr},
      {"prometheus-auth-incluster", "true", "maybe"},
      {"prometheus-auth-config", kKubeconfig, "/nonexistent/kubeconfig"},
      {"prometheus-ca-file", "/etc/prometheus/ca.crt", nullptr},
      {"prometheus-token-file", "/var/run/secrets/prometheus/token", nullptr},
      {"prometheus-header", "X-Scope-OrgID=team-a", "=x"},
      {"prometheus-verb", "POST", "PUT"},
      {"prometheus-client-tls-cert-file", "/etc/prometheus/client.crt", nullptr},
      {"prometheus-client-tls-key-file", "/etc/prometheus/client.key", nullptr},
      {"metrics-relist-interval", "1m", "soon"},
      {"metrics-max-age", "5m", "soon"},
      {"disable-http2", "true", "maybe"},
      // custom-metrics-apiserver's base
      {"lister-kubeconfig", "/etc/kubeconfig", nullptr},
      {"discovery-interval", "10m", "often"},
      {"client-qps", "20", "fast"},
      {"client-burst", "30", "-1"},
      // secure serving
      {"bind-address", "0.0.0.0", nullptr},
      {"cert-dir", "/tmp/cert", nullptr},
      {"http2-max-streams-per-connection", "1000", "many"},
      {"permit-address-sharing", "true", "maybe"},
      {"permit-port-sharing", "true", "maybe"},
      {"secure-port", "6443", "70000"},
      {"tls-cert-file", "/var/run/serving-cert/tls.crt", nullptr},
      {"tls-cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", nullptr},
      {"tls-min-version", "VersionTLS12", "VersionTLS9"},
      {"tls-private-key-file", "/var/run/serving-cert/tls.key", nullptr},
      {"tls-sni-cert-key", "a.crt,a.key:*.example.com", "a.crt"},
      // delegated authentication
      {"authentication-kubeconfig", "/etc/kubeconfig", nullptr},
      {"authentication-skip-lookup", "true", "maybe"},
      {"authentication-token-webhook-cache-ttl", "10s", "long"},
      {"authentication-tolerate-lookup-failure", "true", "maybe"},
      {"client-ca-file", "/etc/ca.crt", nullptr},
      {"requestheader-allowed-names", "front-proxy-client", nullptr},
      {"requestheader-client-ca-file", "/etc/front-proxy-ca.crt", nullptr},
      {"requestheader-extra-headers-prefix", "X-Remote-Extra-", nullptr},
      {"requestheader-group-headers", "X-Remote-Group", nullptr},
      {"requestheader-username-headers", "X-Remote-User", nullptr},
      // delegated authorization
      {"authorization-always-allow-paths", "/healthz,/readyz,/livez", nullptr},
      {"authorization-kubeconfig", "/etc/kubeconfig", nullptr},
      {"authorization-webhook-cache-authorized-ttl", "10s", "long"},
      {"authorization-webhook-cache-unauthorized-ttl", "10s", "long"},
      // audit
      {"audit-log-batch-buffer-size", "10000", "lots"},
      {"audit-log-batch-max-size", "1", "lots"},
      {"audit-log-batch-max-wait", "5s", "long"},
      {"audit-log-batch-throttle-burst", "15", "lots"},
      {"audit-log-batch-throttle-enable", "true", "maybe"},
      {"audit-log-batch-throttle-qps", "10", "lots"},
      {"audit-log-compress", "true", "maybe"},
      {"audit-log-format", "json", "xml"},
      {"audit-log-maxage", "7", "old"},
      {"audit-log-maxbackup", "10", "lots"},
      {"audit-log-maxsize", "100", "big"},
      {"audit-log-mode", "batch", "sometimes"},
      {"audit-log-path", "/var/log/audit/audit.log", nullptr},
      {"audit-log-truncate-enabled", "true", "maybe"},
      {"audit-log-truncate-max-batch-size", "10485760", "big"},
      {"audit-log-truncate-max-event-size", "102400", "big"},
      {"audit-log-version", "audit.k8s.io/v1", "audit.k8s.io/v2"},
      {"audit-policy-file", "/etc/audit/policy.yaml", nullptr},
      {"audit-webhook-batch-buffer-size", "10000", "lots"},
      {"audit-webhook-batch-max-size", "400", "lots"},
      {"audit-webhook-batch-max-wait", "30s", "long"},
      {"audit-webhook-batch-throttle-burst", "15", "lots"},
      {"audit-webhook-batch-throttle-enable", "true", "maybe"},
      {"audit-webhook-batch-throttle-qps", "10", "lots"},
      {"audit-webhook-config-file", "/etc/audit/webhook.kubeconfig", nullptr},
      {"audit-webhook-initial-backoff", "10s", "long"},
      {"audit-webhook-mode", "batch", "sometimes"},
      {"audit-webhook-truncate-enabled", "true", "maybe"},
      {"audit-webhook-truncate-max-batch-size", "10485760", "big"},
      {"audit-webhook-truncate-max-event-size", "102400", "big"},
      {"audit-webhook-version", "audit.k8s.io/v1", "audit.k8s.io/v2"},
      // features
      {"profiling", "true", "maybe"},
      {"contention-profiling", "true", "maybe"},
      // klog and component-base logging
      {"add_dir_header", "true", "maybe"},
      {"alsologtostderr", "true", "maybe"},
      {"log_backtrace_at", "connection.cpp:42", "nowhere"},
      {"log_dir", "/var/log/adapter", nullptr},
      {"log_file", "/var/log/adapter.log", nullptr},
      {"log_file_max_size", "100", "big"},
      {"logtostderr", "false", "maybe"},
      {"one_output", "true", "maybe"},
      {"skip_headers", "true", "maybe"},
      {"skip_log_headers", "true", "maybe"},
      {"stderrthreshold", "WARNING", "LOUD"},
      {"v", "4", "loud"},
      {"vmodule", "connection=8,relist*=6", "connection"},
      {"log-flush-frequency", "5s", "often"},
      // newer releases
      {"logging-format", "json", "xml"},
      {"enable-priority-and-fairness", "false", "maybe"},
      {"debug-socket-path", "/tmp/adapter.sock", nullptr},
  };
  return kFlags;
}

class UpstreamFlagsTest : public ::testing::Test {
 protected:
  static std::string value(const char* text) {
    return text == kKubeconfig ? testing::credentialFiles().kubeconfig : std::string(text);
  }
};

TEST_F(UpstreamFlagsTest, TheTableIsUpstreamsEightyNineAndTheThreeNewer) {
  std::set<std::string> names;
  for (const auto& flag : upstreamFlags()) names.insert(flag.name);
  EXPECT_EQ(names.size(), upstreamFlags().size());  // no flag twice
  EXPECT_EQ(names.size(), 89u + 3u);
}

TEST_F(UpstreamFlagsTest, EveryFlagParsesWithATypicalValueInBothForms) {
  const net::testing::ScopedEnv service_account("METRICS_ADAPTER_SERVICE_ACCOUNT_DIR",
                                                testing::credentialFiles().dir.path().c_str());
  for (const auto& flag : upstreamFlags()) {
    const std::string name = flag.name;
    // --prometheus-auth-incluster and -auth-config cannot be given together; each goes alone.
    for (const std::vector<std::string>& words :
         {std::vector<std::string>{"--" + name + "=" + value(flag.typical)},
          std::vector<std::string>{"-" + name, value(flag.typical)}}) {
      std::vector<std::string> args = {"--config=/etc/adapter/config.yaml"};
      args.insert(args.end(), words.begin(), words.end());
      try {
        const AdapterOptions options = parseFlags(args);
        // A boolean switch's value given as a separate word is a word that is no flag.
        const bool separate_word = words.size() == 2;
        if (!separate_word) {
          EXPECT_TRUE(options.ignored_arguments.empty()) << name;
        }
        ASSERT_FALSE(options.given_flags.empty()) << name;
        EXPECT_EQ(options.given_flags.back().first, name);
      } catch (const FlagError& error) {
        ADD_FAILURE() << "--" << name << "=" << flag.typical << ": " << error.what();
      }
    }
  }
}

TEST_F(UpstreamFlagsTest, ABadValueGetsAMessageNamingTheFlag) {
  for (const auto& flag : upstreamFlags()) {
    if (flag.bad == nullptr) continue;
    const std::string name = flag.name;
    try {
      parseFlags(std::vector<std::string>{"--config=c", "--" + name + "=" + flag.bad});
      ADD_FAILURE() << "--" << name << "=" << flag.bad << " was accepted";
    } catch (const FlagError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("--" + name), std::string::npos) << message;
    }
  }
}

TEST_F(UpstreamFlagsTest, HelpListsEveryFlag) {
  const std::string text = usage();
  for (const auto& flag : upstreamFlags()) {
    const std::string name = flag.name;
    const bool listed = text.find("  --" + name + "=VALUE ") != std::string::npos ||
                        text.find("  --" + name + " ") != std::string::npos;
    EXPECT_TRUE(listed) << name;
  }
}

TEST_F(UpstreamFlagsTest, WordsThatAreNotFlagsAreIgnoredAndKept) {
  const AdapterOptions options = parseFlags(std::vector<std::string>{
      "/adapter", "--secure-port=6443", "--cert-dir=/tmp/cert", "--config=/etc/adapter/c.yaml"});
  EXPECT_EQ(options.ignored_arguments, std::vector<std::string>{"/adapter"});
  EXPECT_EQ(options.server.port, 6443);
  EXPECT_EQ(options.config_file, "/etc/adapter/c.yaml");
}

TEST_F(UpstreamFlagsTest, GoRuntimeFlagsSayWhatHappensInstead) {
  const AdapterOptions options = parseFlags(std::vector<std::string>{
      "--config=c", "--profiling", "--enable-priority-and-fairness=true",
      "--http2-max-streams-per-connection=100", "--tls-min-version=VersionTLS10"});
  ASSERT_EQ(options.notices.size(), 4u);
  EXPECT_NE(options.notices[0].text.find("perf"), std::string::npos);
  EXPECT_NE(options.notices[1].text.find("in-flight"), std::string::npos);
  EXPECT_NE(options.notices[2].text.find("HTTP/1.1"), std::string::npos);
  EXPECT_TRUE(options.notices[3].warning);
  EXPECT_NE(options.notices[3].text.find("--tls-min-version"), std::string::npos);
  EXPECT_EQ(options.server.tls_min_version, "VersionTLS12");
  // Off, they say nothing.
  EXPECT_TRUE(
      parseFlags(std::vector<std::string>{"--config=c", "--profiling=false"}).notices.empty());
}

}  // namespace
}  // namespace metrics_adapter::app
