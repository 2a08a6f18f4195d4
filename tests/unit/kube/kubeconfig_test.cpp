#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "metrics_adapter/kube/kube_client.h"
#include "unit/net/scoped_env.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::kube {
namespace {

using net::testing::ScopedEnv;

// Prefixes every line of `lines` with `indent` spaces.
std::string indented(const std::string& lines, int indent) {
  std::string out;
  std::size_t start = 0;
  while (start < lines.size()) {
    const std::size_t end = lines.find('\n', start);
    const std::size_t stop = end == std::string::npos ? lines.size() : end;
    out += std::string(static_cast<std::size_t>(indent), ' ') + lines.substr(start, stop - start);
    out += '\n';
    start = stop + 1;
  }
  return out;
}

// A kubeconfig whose current context "c" joins cluster "k" and user "u" with the given fields.
std::string kubeconfig(const std::string& cluster, const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n    namespace: ns\n"
         "clusters:\n- name: k\n  cluster:\n" +
         indented(cluster, 4) + "users:\n- name: u\n  user:\n" + indented(user, 4);
}

class KubeconfigTest : public ::testing::Test {
 protected:
  KubeClientOptions load(const std::string& text) {
    return loadKubeconfig(dir_.write("config", text));
  }

  // The message loading `text` fails with.
  std::string errorFor(const std::string& text) {
    const auto error = net::testing::thrown<std::invalid_argument>([&] { load(text); });
    return error ? error->what() : "(loaded)";
  }

  net::testing::TempDir dir_;
  const std::string path_ = dir_.file("config");
};

TEST_F(KubeconfigTest, FollowsTheCurrentContextToClusterAndUser) {
  const std::string text =
      "current-context: second\n"
      "contexts:\n"
      "- name: first\n  context: {cluster: one, user: alice}\n"
      "- name: second\n  context: {cluster: two, user: bob}\n"
      "clusters:\n"
      "- name: one\n  cluster: {server: 'https://one.example:6443'}\n"
      "- name: two\n  cluster: {server: 'https://two.example:6443'}\n"
      "users:\n"
      "- name: alice\n  user: {token: alice-token}\n"
      "- name: bob\n  user: {token: bob-token}\n";
  const KubeClientOptions options = load(text);
  EXPECT_EQ(options.server, "https://two.example:6443");
  EXPECT_EQ(options.token, "bob-token");
  EXPECT_EQ(options.source, path_);
}

TEST_F(KubeconfigTest, ReadsEveryCredentialField) {
  struct Case {
    const char* label;
    std::string cluster;
    std::string user;
    KubeClientOptions expected;  // source is checked separately
  };
  const std::string dir = dir_.path().string();
  const auto expect = [](auto&& fill) {
    KubeClientOptions options;
    options.server = "https://10.0.0.1:6443";
    fill(options);
    return options;
  };
  const Case cases[] = {
      {"*-data fields are base64 of the PEM text",
       "server: https://10.0.0.1:6443\ncertificate-authority-data: Y2EtcGVt\n",
       "client-certificate-data: Y2VydC1wZW0=\nclient-key-data: a2V5LXBlbQ==\n",
       expect([](KubeClientOptions& o) {
         o.ca_data = "ca-pem";
         o.client_cert_data = "cert-pem";
         o.client_key_data = "key-pem";
       })},
      {"relative paths are relative to the kubeconfig's directory, absolute ones stay",
       "server: https://10.0.0.1:6443\ncertificate-authority: ca.crt\n",
       "client-certificate: certs/client.crt\nclient-key: /etc/keys/client.key\n"
       "tokenFile: token\n",
       expect([&](KubeClientOptions& o) {
         o.ca_file = dir + "/ca.crt";
         o.client_cert_file = dir + "/certs/client.crt";
         o.client_key_file = "/etc/keys/client.key";
         o.token_file = dir + "/token";
       })},
      {"token and insecure-skip-tls-verify",
       "server: https://10.0.0.1:6443\ninsecure-skip-tls-verify: true\n", "token: abc.def\n",
       expect([](KubeClientOptions& o) {
         o.token = "abc.def";
         o.insecure_skip_tls_verify = true;
       })},
      {"basic auth is read (--prometheus-auth-config uses it; KubeClient refuses it)",
       "server: https://10.0.0.1:6443\n", "username: admin\npassword: 's3cret:x'\n",
       expect([](KubeClientOptions& o) {
         o.username = "admin";
         o.password = "s3cret:x";
       })},
      {"an empty user authenticates with nothing", "server: https://10.0.0.1:6443\n", "{}\n",
       expect([](KubeClientOptions&) {})},
  };
  for (const auto& c : cases) {
    const KubeClientOptions got = load(kubeconfig(c.cluster, c.user));
    const KubeClientOptions& want = c.expected;
    EXPECT_EQ(got.server, want.server) << c.label;
    EXPECT_EQ(got.ca_file, want.ca_file) << c.label;
    EXPECT_EQ(got.ca_data, want.ca_data) << c.label;
    EXPECT_EQ(got.client_cert_file, want.client_cert_file) << c.label;
    EXPECT_EQ(got.client_key_file, want.client_key_file) << c.label;
    EXPECT_EQ(got.client_cert_data, want.client_cert_data) << c.label;
    EXPECT_EQ(got.client_key_data, want.client_key_data) << c.label;
    EXPECT_EQ(got.token, want.token) << c.label;
    EXPECT_EQ(got.token_file, want.token_file) << c.label;
    EXPECT_EQ(got.username, want.username) << c.label;
    EXPECT_EQ(got.password, want.password) << c.label;
    EXPECT_EQ(got.insecure_skip_tls_verify, want.insecure_skip_tls_verify) << c.label;
  }
}

TEST_F(KubeconfigTest, AContextWithoutUserNeedsNoUsersList) {
  const KubeClientOptions options = load(
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
      "clusters:\n- name: k\n  cluster: {server: 'http://127.0.0.1:8080'}\n");
  EXPECT_EQ(options.server, "http://127.0.0.1:8080");
  EXPECT_EQ(options.token, "");
  EXPECT_EQ(options.client_cert_file, "");
}

TEST_F(KubeconfigTest, ErrorsNameTheFileAndTheField) {
  const std::string server = "server: https://10.0.0.1:6443\n";
  const std::string use = "; use a token or client certificate";
  struct Case {
    std::string text;
    std::string expected;  // after "kubeconfig <path>: "
  };
  const Case cases[] = {
      {"kind: Config\n", "current-context is not set"},
      {"current-context: ''\n", "current-context is not set"},
      {"current-context: nope\ncontexts: []\n",
       "context \"nope\" (named by the current-context) is not defined under contexts"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {user: u}\n",
       "context \"c\": cluster is not set"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: x}\nclusters: []\n",
       "cluster \"x\" (named by context \"c\") is not defined under clusters"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: v}\n"
       "clusters:\n- name: k\n  cluster: {server: 'https://h'}\n",
       "user \"v\" (named by context \"c\") is not defined under users"},
      {"current-context: c\ncontexts: {c: {cluster: k}}\n", "contexts must be a list"},
      {kubeconfig("certificate-authority: ca.crt\n", "{}\n"), "cluster \"k\": server is not set"},
      {kubeconfig("server: {url: x}\n", "{}\n"), "cluster \"k\": server must be a string"},
      {kubeconfig(server + "insecure-skip-tls-verify: maybe\n", "{}\n"),
       "cluster \"k\": insecure-skip-tls-verify must be true or false"},
      {kubeconfig(server + "certificate-authority: ca.crt\ncertificate-authority-data: Y2EtcGVt\n",
                  "{}\n"),
       "cluster \"k\": certificate-authority and certificate-authority-data are both set; use one"},
      {kubeconfig(server, "client-certificate: c.crt\nclient-certificate-data: Y2VydC1wZW0=\n"),
       "user \"u\": client-certificate and client-certificate-data are both set; use one"},
      {kubeconfig(server, "client-key: k.pem\nclient-key-data: a2V5LXBlbQ==\n"),
       "user \"u\": client-key and client-key-data are both set; use one"},
      {kubeconfig(server, "client-key-data: '%%%'\n"),
       "user \"u\": client-key-data is not valid base64"},
      {kubeconfig(server, "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: aws\n"),
       "user \"u\": exec credential plugins are not supported" + use},
      {kubeconfig(server, "auth-provider:\n  name: oidc\n"),
       "user \"u\": auth-provider plugins are not supported" + use},
      {kubeconfig(server, "token: t\nas: someone-else\n"),
       "user \"u\": impersonation (as) is not supported" + use},
      {"- just\n- a list\n", "not a kubeconfig (expected a mapping at the top)"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(errorFor(c.text), "kubeconfig " + path_ + ": " + c.expected) << c.text;
  }
}

TEST_F(KubeconfigTest, UnreadableOrMalformedFilesAreInvalidArguments) {
  const std::string text = errorFor("current-context: [unclosed\n");
  EXPECT_EQ(text.rfind("kubeconfig " + path_ + ": invalid YAML", 0), 0u) << text;

  const std::string missing = dir_.file("missing");
  try {
    loadKubeconfig(missing);
    FAIL() << "loaded a missing file";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("kubeconfig " + missing + ": cannot read it", 0), 0u)
        << e.what();
  }
}

TEST(InClusterOptionsTest, BuiltFromTheServiceEnvironmentAndTheSecretsDirectory) {
  struct Case {
    const char* host;
    const char* port;
    std::optional<std::string> server;  // nullopt: not in a cluster
  };
  const Case cases[] = {
      {"10.96.0.1", "443", "https://10.96.0.1:443"},
      {"fd00:10:96::1", "6443", "https://[fd00:10:96::1]:6443"},
      {nullptr, "443", std::nullopt},
      {"10.96.0.1", nullptr, std::nullopt},
      {"", "443", std::nullopt},
      {nullptr, nullptr, std::nullopt},
  };
  for (const auto& c : cases) {
    const ScopedEnv host("KUBERNETES_SERVICE_HOST", c.host);
    const ScopedEnv port("KUBERNETES_SERVICE_PORT", c.port);
    const std::optional<KubeClientOptions> options = inClusterOptions("/secrets");
    ASSERT_EQ(options.has_value(), c.server.has_value()) << (c.host ? c.host : "(unset)");
    if (!options) continue;
    EXPECT_EQ(options->server, *c.server);
    EXPECT_EQ(options->token_file, "/secrets/token");
    EXPECT_EQ(options->ca_file, "/secrets/ca.crt");
    EXPECT_EQ(options->token, "");
    EXPECT_EQ(options->source, "in-cluster");
  }
}

TEST(ServiceAccountDirTest, TheEnvironmentOverridesTheMountPath) {
  {
    const ScopedEnv unset("METRICS_ADAPTER_SERVICE_ACCOUNT_DIR", nullptr);
    EXPECT_EQ(serviceAccountDir(), "/var/run/secrets/kubernetes.io/serviceaccount");
  }
  const ScopedEnv set("METRICS_ADAPTER_SERVICE_ACCOUNT_DIR", "/tmp/sa");
  EXPECT_EQ(serviceAccountDir(), "/tmp/sa");
}

}  // namespace
}  // namespace metrics_adapter::kube
