#include "app/prometheus_auth.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "metrics_adapter/net/base64.h"
#include "unit/net/test_certificates.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::app {
namespace {

using net::testing::TempDir;
using prometheus::PrometheusClientOptions;

std::string base64(const std::string& text) { return net::encodeBase64(text); }

class PrometheusAuthTest : public ::testing::Test {
 protected:
  // A new kubeconfig whose current context joins a cluster with `cluster_fields` and a user with
  // `user_fields` (flow-style YAML mappings' contents); a second, unused user carries a token
  // that must never be picked.
  std::string kubeconfig(const std::string& cluster_fields, const std::string& user_fields) {
    return dir_.write("kubeconfig-" + std::to_string(++written_),
                      "current-context: prom\n"
                      "contexts:\n"
                      "- {name: other, context: {cluster: k, user: other}}\n"
                      "- {name: prom, context: {cluster: k, user: u}}\n"
                      "clusters:\n"
                      "- {name: k, cluster: {server: 'https://kube.example:6443'" +
                          cluster_fields +
                          "}}\n"
                          "users:\n"
                          "- {name: other, user: {token: other-token}}\n"
                          "- {name: u, user: {" +
                          user_fields + "}}\n");
  }

  PrometheusClientOptions apply(const std::string& path,
                                PrometheusClientOptions options = PrometheusClientOptions()) {
    applyPrometheusAuthConfig(path, options);
    return options;
  }

  std::string errorFor(const std::string& path,
                       PrometheusClientOptions options = PrometheusClientOptions()) {
    const auto error = net::testing::thrown<std::invalid_argument>(
        [&] { applyPrometheusAuthConfig(path, options); });
    return error ? error->what() : "(accepted)";
  }

  TempDir dir_;
  int written_ = 0;
  const net::testing::TestPki pki_ = net::testing::makeTestPki();
};

TEST_F(PrometheusAuthTest, BearerTokenInlineOrFromTokenFile) {
  const PrometheusClientOptions inline_token = apply(kubeconfig("", "token: abc.def"));
  EXPECT_EQ(inline_token.bearer_token, "abc.def");
  EXPECT_EQ(inline_token.token_file, "");
  EXPECT_EQ(inline_token.url, PrometheusClientOptions().url);  // the server is not Prometheus

  dir_.write("token", "file-token\n");
  // tokenFile wins over token, as in client-go; relative paths are the kubeconfig's directory's.
  const PrometheusClientOptions from_file =
      apply(kubeconfig("", "token: ignored, tokenFile: token"));
  EXPECT_EQ(from_file.token_file, dir_.file("token"));
  EXPECT_EQ(from_file.bearer_token, "");
}

TEST_F(PrometheusAuthTest, BasicAuthFromUsernameAndPassword) {
  const PrometheusClientOptions options =
      apply(kubeconfig("", "username: admin, password: 'pa:ss'"));
  EXPECT_EQ(options.basic_auth_username, "admin");
  EXPECT_EQ(options.basic_auth_password, "pa:ss");
  EXPECT_EQ(options.basic_auth_password_file, "");
  EXPECT_EQ(options.bearer_token, "");
}

TEST_F(PrometheusAuthTest, CertificatesAsFilesOrInlineData) {
  dir_.write("ca.crt", pki_.ca_cert);
  dir_.write("client.crt", pki_.client_cert);
  dir_.write("client.key", pki_.client_key);
  const PrometheusClientOptions files =
      apply(kubeconfig(", certificate-authority: ca.crt",
                       "client-certificate: client.crt, client-key: " + dir_.file("client.key")));
  EXPECT_EQ(files.ca_file, dir_.file("ca.crt"));
  EXPECT_EQ(files.client_cert_file, dir_.file("client.crt"));
  EXPECT_EQ(files.client_key_file, dir_.file("client.key"));
  EXPECT_TRUE(files.ca_replaces_system_roots);
  EXPECT_EQ(files.ca_data, "");

  const PrometheusClientOptions data =
      apply(kubeconfig(", certificate-authority-data: " + base64(pki_.ca_cert),
                       "client-certificate-data: " + base64(pki_.client_cert) +
                           ", client-key-data: " + base64(pki_.client_key)));
  EXPECT_EQ(data.ca_data, pki_.ca_cert);
  EXPECT_EQ(data.client_cert_data, pki_.client_cert);
  EXPECT_EQ(data.client_key_data, pki_.client_key);
  EXPECT_TRUE(data.ca_replaces_system_roots);
  EXPECT_EQ(data.ca_file, "");
}

TEST_F(PrometheusAuthTest, InsecureSkipTlsVerifyAndNoCaKeepTheSystemRoots) {
  const PrometheusClientOptions options =
      apply(kubeconfig(", insecure-skip-tls-verify: true", "token: t"));
  EXPECT_TRUE(options.insecure_skip_tls_verify);
  EXPECT_FALSE(options.ca_replaces_system_roots);
  EXPECT_FALSE(apply(kubeconfig("", "token: t")).insecure_skip_tls_verify);
}

TEST_F(PrometheusAuthTest, TheTokenFileFlagWinsOverTheKubeconfigCredential) {
  dir_.write("flag-token", "flag\n");
  dir_.write("ca.crt", pki_.ca_cert);
  PrometheusClientOptions flags;
  flags.token_file = dir_.file("flag-token");
  const PrometheusClientOptions options =
      apply(kubeconfig(", certificate-authority: ca.crt", "username: a, password: b"), flags);
  EXPECT_EQ(options.token_file, dir_.file("flag-token"));
  EXPECT_EQ(options.basic_auth_username, "");
  EXPECT_EQ(options.ca_file, dir_.file("ca.crt"));  // TLS settings still apply
}

TEST_F(PrometheusAuthTest, ErrorsNameTheFlagTheKubeconfigAndTheField) {
  dir_.write("ca.crt", pki_.ca_cert);
  struct Case {
    std::string path;
    std::string expected;  // after the prefix
  };
  const std::vector<Case> cases = {
      {kubeconfig("", "token: t, username: u, password: p"),
       "a user may set a token or username/password, not both"},
      {kubeconfig("", "username: u"), "basic authentication needs both username and password"},
      {kubeconfig(", certificate-authority: ca.crt, insecure-skip-tls-verify: true", ""),
       "certificate-authority cannot be combined with insecure-skip-tls-verify"},
      {kubeconfig("", "tokenFile: missing-token"),
       "tokenFile: cannot read " + dir_.file("missing-token")},
      {kubeconfig(", certificate-authority: missing-ca.crt", ""),
       "the CA: cannot use " + dir_.file("missing-ca.crt")},
      {kubeconfig(", certificate-authority-data: " + base64("not pem"), ""),
       "the CA: cannot use the PEM data"},
      {kubeconfig("", "client-certificate-data: " + base64(pki_.client_cert)),
       "the client certificate and {prefix}the client key must be set together"},
  };
  for (const auto& c : cases) {
    const std::string prefix = "--prometheus-auth-config (kubeconfig " + c.path + "): ";
    std::string expected = prefix + c.expected;
    if (const auto at = expected.find("{prefix}"); at != std::string::npos) {
      expected.replace(at, 8, prefix);
    }
    const std::string message = errorFor(c.path);
    EXPECT_EQ(message.rfind(expected, 0), 0u) << message;
  }
  const std::string exec = kubeconfig("", "exec: {command: aws}");
  const std::string message = errorFor(exec);
  EXPECT_EQ(message.rfind("--prometheus-auth-config: kubeconfig " + exec +
                              ": user \"u\": exec credential plugins are not supported",
                          0),
            0u)
      << message;
}

TEST_F(PrometheusAuthTest, ACredentialTheFlagsAlreadySetIsAConflict) {
  dir_.write("ca.crt", pki_.ca_cert);
  PrometheusClientOptions flags;
  flags.client_cert_file = "/flag/client.crt";
  flags.client_key_file = "/flag/client.key";
  EXPECT_NE(errorFor(kubeconfig("", "client-certificate-data: " + base64(pki_.client_cert) +
                                        ", client-key-data: " + base64(pki_.client_key)),
                     flags)
                .find("--prometheus-client-tls-cert-file/-key-file do too"),
            std::string::npos);
}

TEST_F(PrometheusAuthTest, InClusterUsesTheServiceAccountTokenFileAndCa) {
  dir_.write("token", "sa-token\n");
  dir_.write("ca.crt", pki_.ca_cert);
  PrometheusClientOptions options;
  applyPrometheusInCluster(options, dir_.path().string());
  EXPECT_EQ(options.token_file, dir_.file("token"));  // a file: the client re-reads it
  EXPECT_EQ(options.ca_file, dir_.file("ca.crt"));
  EXPECT_TRUE(options.ca_replaces_system_roots);

  TempDir empty;
  PrometheusClientOptions missing;
  const auto error = net::testing::thrown<std::invalid_argument>(
      [&] { applyPrometheusInCluster(missing, empty.path().string()); });
  ASSERT_TRUE(error);
  EXPECT_EQ(std::string(error->what())
                .rfind("--prometheus-auth-incluster: the service-account token: cannot read " +
                           empty.file("token"),
                       0),
            0u)
      << error->what();
}

TEST_F(PrometheusAuthTest, TheFlagsAreExclusiveAndYieldToTheCaFile) {
  const std::string path = kubeconfig("", "token: t");
  PrometheusClientOptions options;
  const auto both = net::testing::thrown<std::invalid_argument>(
      [&] { applyPrometheusAuthFlags(path, true, options); });
  ASSERT_TRUE(both);
  EXPECT_STREQ(both->what(),
               "--prometheus-auth-config and --prometheus-auth-incluster cannot be used together; "
               "choose one");

  PrometheusClientOptions with_ca;
  with_ca.ca_file = "/etc/prometheus/ca.crt";
  const PrometheusClientOptions before = with_ca;
  applyPrometheusAuthFlags(path, false, with_ca);  // ignored, as upstream
  EXPECT_EQ(with_ca, before);
  applyPrometheusAuthFlags("", true, with_ca);
  EXPECT_EQ(with_ca, before);

  PrometheusClientOptions plain;
  applyPrometheusAuthFlags(path, false, plain);
  EXPECT_EQ(plain.bearer_token, "t");
  PrometheusClientOptions none;
  applyPrometheusAuthFlags("", false, none);
  EXPECT_EQ(none, PrometheusClientOptions());
}

}  // namespace
}  // namespace metrics_adapter::app
