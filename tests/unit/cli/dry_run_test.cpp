#include "cli/dry_run.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "metrics_adapter/app/flags.h"
#include "unit/net/scoped_env.h"
#include "unit/net/test_certificates.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::cli {
namespace {

using net::testing::ScopedEnv;
using net::testing::TempDir;

// One custom and one external rule, so the summary's counts come from two different lists.
constexpr const char* kConfig = R"(rules:
- seriesQuery: '{__name__=~"^DCGM_FI_.*",namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name: {matches: ^DCGM_FI_.*$}
  metricsQuery: avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
externalRules:
- seriesQuery: '{__name__="cuda_test_gpu_avg"}'
  resources: {namespaced: false}
  metricsQuery: <<.Series>>{<<.LabelMatchers>>}
)";

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

// Parses `args` as the binary does and dry-runs the result.
Outcome dryRun(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const app::AdapterOptions options = app::parseFlags(args);
  EXPECT_TRUE(options.dry_run);
  const int code = runDryRun(options, out, err);
  return {code, out.str(), err.str()};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The Deployment's flags with every file a flag names present in a temporary directory.
class DryRunTest : public ::testing::Test {
 protected:
  DryRunTest()
      : pki_(net::testing::makeTestPki()),
        config_(dir_.write("config.yaml", kConfig)),
        cert_(dir_.write("tls.crt", pki_.server_cert)),
        key_(dir_.write("tls.key", pki_.server_key)) {}

  std::vector<std::string> deploymentArgs() const {
    return {"--dry-run",
            "--config=" + config_,
            "--prometheus-url=http://prometheus.monitoring.svc:9090/",
            "--secure-port=6443",
            "--tls-cert-file=" + cert_,
            "--tls-private-key-file=" + key_,
            "--authentication-mode=delegated"};
  }

  // Outside a pod unless a test says otherwise.
  ScopedEnv no_cluster_{"KUBERNETES_SERVICE_HOST", nullptr};
  TempDir dir_;
  net::testing::TestPki pki_;
  std::string config_;
  std::string cert_;
  std::string key_;
};

TEST_F(DryRunTest, DeploymentFlagsPassWithOneSummaryLine) {
  const Outcome outcome = dryRun(deploymentArgs());
  EXPECT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_EQ(outcome.err, "");
  ASSERT_FALSE(outcome.out.empty());
  EXPECT_EQ(outcome.out.find('\n'), outcome.out.size() - 1) << outcome.out;
  EXPECT_TRUE(
      outcome.out.starts_with("dry run OK: config " + config_ + " (1 rules, 1 externalRules)"))
      << outcome.out;
  EXPECT_TRUE(contains(outcome.out,
                       "backend default (http://prometheus.monitoring.svc:9090/): rules[0], "
                       "externalRules[0]"))
      << outcome.out;
  EXPECT_TRUE(contains(outcome.out, "HTTPS on 0.0.0.0:6443 with " + cert_ + " (valid until "));
  EXPECT_TRUE(contains(outcome.out, "authentication delegated"));
  // The service account exists only in a pod: noted, not an error.
  EXPECT_TRUE(contains(outcome.out, "Kubernetes API in-cluster (not present here"));
}

TEST_F(DryRunTest, EveryProblemIsReportedNotJustTheFirst) {
  std::vector<std::string> args = deploymentArgs();
  args[1] = "--config=" + dir_.file("missing.yaml");
  args.push_back("--tls-cipher-suites=TLS_NO_SUCH_SUITE");
  args.push_back("--prometheus-ca-file=" + dir_.file("missing-ca.crt"));
  args.push_back("--client-ca-file=" + dir_.write("not-a-ca.crt", "hello\n"));
  args.push_back("--kubeconfig=" + dir_.file("missing-kubeconfig"));
  args.push_back("--bind-address=not-an-address");
  const Outcome outcome = dryRun(args);
  EXPECT_EQ(outcome.code, 1);
  EXPECT_EQ(outcome.out, "");
  for (const std::string& expected :
       {dir_.file("missing.yaml"), std::string("TLS_NO_SUCH_SUITE"), dir_.file("missing-ca.crt"),
        std::string("--client-ca-file"), std::string("--kubeconfig"), std::string("--bind-address"),
        std::string("would not start (6 problems)")}) {
    EXPECT_TRUE(contains(outcome.err, expected)) << expected << " not in:\n" << outcome.err;
  }
}

TEST_F(DryRunTest, InvalidConfigNamesTheField) {
  std::vector<std::string> args = deploymentArgs();
  args[1] = "--config=" + dir_.write("bad.yaml",
                                     "rules:\n- seriesQuery: '{a!=\"\"}'\n"
                                     "  name: {matches: \"(\"}\n"
                                     "  metricsQuery: x\n");
  const Outcome outcome = dryRun(args);
  EXPECT_EQ(outcome.code, 1);
  EXPECT_TRUE(contains(outcome.err, "invalid configuration: "));
  EXPECT_TRUE(contains(outcome.err, "rules[0].name.matches")) << outcome.err;
}

TEST_F(DryRunTest, MissingOrMismatchedServingFilesFail) {
  const net::testing::TestPki other = net::testing::makeTestPki();
  const std::string other_key = dir_.write("other.key", other.server_key);
  struct Case {
    std::size_t index;  // in deploymentArgs()
    std::string word;   // replaces it
    std::string expected;
  };
  const std::vector<Case> cases = {
      {4, "--tls-cert-file=" + dir_.file("absent.crt"), dir_.file("absent.crt")},
      {5, "--tls-private-key-file=" + dir_.file("absent.key"), dir_.file("absent.key")},
      {5, "--tls-private-key-file=" + other_key, "does not match"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = deploymentArgs();
    args[c.index] = c.word;
    const Outcome outcome = dryRun(args);
    EXPECT_EQ(outcome.code, 1) << c.word;
    EXPECT_TRUE(contains(outcome.err, c.expected)) << c.word << " -> " << outcome.err;
  }
  std::vector<std::string> cert_only = deploymentArgs();
  cert_only.erase(cert_only.begin() + 5);
  const Outcome outcome = dryRun(cert_only);
  EXPECT_EQ(outcome.code, 1);
  EXPECT_TRUE(contains(outcome.err, "must be given together")) << outcome.err;
}

TEST_F(DryRunTest, SniPairsAreLoadedAndABadOneNamesTheFlagAndValue) {
  std::vector<std::string> args = deploymentArgs();
  args.push_back("--tls-sni-cert-key=" + cert_ + "," + key_ + ":metrics.example.com");
  const Outcome good = dryRun(args);
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_TRUE(contains(good.out, "1 SNI certificate (--tls-sni-cert-key)")) << good.out;

  const net::testing::TestPki other = net::testing::makeTestPki();
  const std::string value = cert_ + "," + dir_.write("other.key", other.server_key);
  args.push_back("--tls-sni-cert-key=" + value);
  const Outcome bad = dryRun(args);
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(contains(bad.err, "--tls-sni-cert-key=\"" + value + "\": ")) << bad.err;
  EXPECT_TRUE(contains(bad.err, "does not match")) << bad.err;
}

TEST_F(DryRunTest, CertificateOutsideItsValidityIsAWarning) {
  using namespace net::testing::pki_detail;
  const Key key = newKey();
  const Certificate expired =
      issue(CertificateSpec{"old", {}, {}, -7200, -3600}, key.get(), nullptr, key.get());
  std::vector<std::string> args = deploymentArgs();
  args[4] = "--tls-cert-file=" + dir_.write("old.crt", certificatePem(expired.get()));
  args[5] = "--tls-private-key-file=" + dir_.write("old.key", keyPem(key.get()));
  const Outcome outcome = dryRun(args);
  EXPECT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_TRUE(outcome.out.starts_with("warning: " + dir_.file("old.crt") + " is not valid now"))
      << outcome.out;
  EXPECT_TRUE(contains(outcome.out, "\ndry run OK: "));
}

TEST_F(DryRunTest, LocalModeNeedsNoKubernetesAndSaysSo) {
  const Outcome outcome = dryRun({"--dry-run", "--config", config_, "--authentication-mode=none",
                                  "--cert-dir=/x", "--secure-port=8443"});
  EXPECT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_TRUE(contains(outcome.out, "authentication none (local use only)"));
  EXPECT_TRUE(contains(outcome.out, "Kubernetes API none"));
  EXPECT_TRUE(contains(outcome.out, "HTTPS on 0.0.0.0:8443 with a self-signed certificate in /x"))
      << outcome.out;
}

TEST_F(DryRunTest, InClusterServiceAccountIsCheckedInAPod) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.0.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  // The default secrets directory does not exist on a test machine: the pod would not work.
  const Outcome outcome = dryRun(deploymentArgs());
  EXPECT_EQ(outcome.code, 1);
  EXPECT_TRUE(contains(outcome.err, "in-cluster service account: ")) << outcome.err;
}

TEST_F(DryRunTest, KubeconfigIsLoaded) {
  const std::string kubeconfig = dir_.write("kubeconfig", R"(apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)");
  std::vector<std::string> args = deploymentArgs();
  args.push_back("--kubeconfig=" + kubeconfig);
  Outcome outcome = dryRun(args);
  EXPECT_EQ(outcome.code, 1);  // ca.crt is not there yet
  EXPECT_TRUE(contains(outcome.err, "--kubeconfig: ")) << outcome.err;
  dir_.write("ca.crt", pki_.ca_cert);
  outcome = dryRun(args);
  EXPECT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_TRUE(contains(outcome.out, "Kubernetes API " + kubeconfig)) << outcome.out;
}

}  // namespace
}  // namespace metrics_adapter::cli
